import { DocketError } from '@docket/core';
import {
  checkWrite,
  eventParams,
  historyParams,
  isThenable,
  type PlanResult,
  type RunRecord,
  type RunWrite,
  rowToRun,
  runChanges,
  type TransactPlan,
} from '@docket/core/store';
import type { OpenConnection, SqliteContext } from '../context.js';
import type { SqliteTransaction } from '../options.js';
import { countMove, countSettle } from './run-counts.js';
import type { Statements } from './statements.js';

/**
 * Applies one conditional run write: the row updated only at `current`'s revision, then its history and events, and
 * the counts of `operator.stats()` when the run moves into or out of a counted status, and its minute's count when
 * it settles.
 */
export function applyWrite(s: Statements, current: RunRecord, write: RunWrite): void {
  checkWrite(current, write);
  const changed = s.updateRun(current.runId, current.revision, runChanges(current, write.run));
  if (changed !== 1) throw new Error(`internal: run ${current.runId} moved during its transaction`);
  countMove(s, current.namespace, current.taskName, current.taskVersion, current.status, write.run.status);
  countSettle(s, current.namespace, current.status, write.run.status, write.run.updatedAt);
  for (const entry of write.history) s.insertHistory.run(historyParams(write.run.runId, entry));
  for (const event of write.events) s.insertEvent.run(eventParams(event));
}

/**
 * `Store.transact`. Inside the group's transaction, better-sqlite3 turns this drizzle transaction into a SAVEPOINT:
 * the plan and its effect still get a real drizzle transaction, and a throw rolls back only this run's writes. A plan
 * that returns a promise is refused: SQLite transactions are synchronous.
 */
export function transact<T>(
  ctx: SqliteContext,
  namespace: string,
  runId: string,
  plan: TransactPlan<T, SqliteTransaction>,
): Promise<T> {
  let planError: unknown;
  const work = ({ s, orm }: OpenConnection) =>
    orm.transaction(
      (tx) => {
        const row = s.selectRun.get(namespace, runId);
        const current = row ? rowToRun(row) : null;
        let result: PlanResult<T> | Promise<PlanResult<T>>;
        try {
          result = plan(tx as unknown as SqliteTransaction, current);
        } catch (error) {
          planError = error;
          throw error;
        }
        if (isThenable(result)) {
          Promise.resolve(result).catch(() => undefined);
          planError = new DocketError('HANDLER_CONTRACT_INVALID', 'SQLite transactions are synchronous', {
            operation: 'store.transact',
            runId,
          });
          throw planError;
        }
        const { write, value } = result as PlanResult<T>;
        if (write !== null) {
          if (current === null) throw new Error('internal: write for a missing run');
          applyWrite(s, current, write);
        }
        return value;
      },
      { behavior: 'immediate' },
    );
  return ctx.write('store.transact', work, runId, () => planError);
}
