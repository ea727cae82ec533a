import { DocketError } from '../../util/errors.js';
import type { Json } from '../../util/json.js';
import { isThenable } from '../../util/thenable.js';
import { checkWrite } from '../checks.js';
import type { TransactPlan } from '../contract.js';
import { clone, key, type MemoryState } from './state.js';

/**
 * The handle effects and checks receive from the memory store: a staging area for the application's own rows that
 * becomes visible only when the transaction commits.
 */
export interface MemoryTransaction {
  /** Stages a row in an application table. */
  put(table: string, key: string, value: Json): void;
  /** Reads a row, staged writes of this transaction first. */
  get(table: string, key: string): Json | undefined;
}

/**
 * `Store.transact`: core's plan with a copy of the run and a staging transaction; its write and staged rows land
 * together, or nothing does. A promise from the plan is refused unless the store was made with `asyncTransactions`.
 */
export function transact<T>(
  m: MemoryState,
  namespace: string,
  runId: string,
  plan: TransactPlan<T, MemoryTransaction>,
): Promise<T> {
  return m.exclusive(async () => {
    const staged = new Map<string, Map<string, Json>>();
    const tx: MemoryTransaction = {
      put(table, rowKey, value) {
        const rows = staged.get(table) ?? new Map<string, Json>();
        staged.set(table, rows);
        rows.set(rowKey, clone(value));
      },
      get(table, rowKey) {
        return clone(staged.get(table)?.get(rowKey) ?? m.appTables.get(table)?.get(rowKey));
      },
    };
    const current = m.runs.get(key(namespace, runId));
    let result = plan(tx, current ? clone(current) : null);
    if (isThenable(result)) {
      if (!m.capabilities.asyncTransactions) {
        (result as Promise<unknown>).catch(() => undefined);
        throw new DocketError('HANDLER_CONTRACT_INVALID', 'this store runs transactions synchronously', {
          operation: 'store.transact',
          runId,
        });
      }
      result = await result;
    }
    if (result.write !== null) {
      if (!current) throw new Error('internal: write for a missing run');
      checkWrite(current, result.write);
      m.applyWrite(result.write);
    }
    for (const [table, rows] of staged) {
      const target = m.appTables.get(table) ?? new Map<string, Json>();
      m.appTables.set(table, target);
      for (const [rowKey, value] of rows) target.set(rowKey, value);
    }
    return result.value;
  });
}
