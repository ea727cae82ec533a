import type { PostgresTransaction } from '../connection.js';
import type { OutcomeTracker } from '../errors.js';

/** Runs `work` in one transaction, calling `outcome.committing()` before COMMIT; errors are the driver's own. */
export type Transaction = <T>(outcome: OutcomeTracker, work: (tx: PostgresTransaction) => Promise<T>) => Promise<T>;
