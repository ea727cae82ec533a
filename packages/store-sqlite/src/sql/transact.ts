import { DocketError } from '@docket/core';
import {
  isThenable,
  type PlanResult,
  type RunRecord,
  type RunWrite,
  type TransactOptions,
  type TransactPlan,
} from '@docket/core/store';
import { BatchAbort } from '../commit-batcher.js';
import type { OpenConnection, SqliteContext } from '../context.js';
import type { SqliteTransaction } from '../options.js';
import { applyWrite, tryApplyWrite } from '../writes/run-writes.js';

/**
 * `Store.transact`. A pure plan goes to `transactPure`. Otherwise, inside the batch's transaction, better-sqlite3
 * turns this drizzle transaction into a SAVEPOINT: the plan and its effect get a real drizzle transaction, and a throw
 * rolls back only this run's writes. A plan that returns a promise is refused: SQLite transactions are synchronous.
 */
export function transact<T>(
  ctx: SqliteContext,
  namespace: string,
  runId: string,
  plan: TransactPlan<T, SqliteTransaction>,
  options?: TransactOptions,
): Promise<T> {
  if (options?.pure === true) return transactPure(ctx, namespace, runId, plan);
  ctx.known.forget(runId);
  let planError: unknown;
  const work = ({ s, orm }: OpenConnection) =>
    orm.transaction(
      (tx) => {
        const row = s.selectRun.get(namespace, runId);
        const current = row ? s.runOf(row) : null;
        let result: PlanResult<T>;
        try {
          result = decide(plan, tx as unknown as SqliteTransaction, current, runId);
        } catch (error) {
          planError = error;
          throw error;
        }
        if (result.write !== null) {
          if (current === null) throw new Error('internal: write for a missing run');
          applyWrite(s, current, result.write);
        }
        return result.value;
      },
      { behavior: 'immediate' },
    );
  return ctx.write('store.transact', work, runId, () => planError);
}

/**
 * A pure plan (it ignores `tx` and has no effect): no drizzle transaction and no savepoint (the plan decides before
 * anything is written; a write that fails half-way rolls back the batch, see `BatchAbort`). For a run this store last
 * wrote with a lease (one its workers execute, see `KnownRuns`), the plan is decided on the remembered row and
 * written with the row's guard, without reading and decoding the row first; if the guard fails, or the plan wrote
 * nothing or threw on the remembered row, the row is read and the plan decides again.
 */
function transactPure<T>(
  ctx: SqliteContext,
  namespace: string,
  runId: string,
  plan: TransactPlan<T, SqliteTransaction>,
): Promise<T> {
  let planError: unknown;
  let written: RunRecord | null = null;
  const work = ({ s }: OpenConnection): T => {
    written = null;
    const remembered = ctx.known.get(namespace, runId);
    if (remembered !== undefined) {
      const fast = decideOrNull(plan, remembered, runId);
      if (fast?.write && writeOrAbort(() => tryApplyWrite(s, remembered, fast.write as RunWrite))) {
        written = fast.write.run;
        return fast.value;
      }
      ctx.known.forget(runId);
    }
    const row = s.selectRun.get(namespace, runId);
    const current = row ? s.runOf(row) : null;
    let result: PlanResult<T>;
    try {
      result = decide(plan, undefined as never, current, runId);
    } catch (error) {
      planError = error;
      throw error;
    }
    const write = result.write;
    if (write !== null) {
      if (current === null) throw new Error('internal: write for a missing run');
      writeOrAbort(() => applyWrite(s, current, write));
      written = write.run;
    }
    return result.value;
  };
  return ctx
    .write('store.transact', work, runId, () => planError, 'none')
    .then(
      (value) => {
        if (written !== null) ctx.known.committed(written);
        return value;
      },
      (error: unknown) => {
        ctx.known.forget(runId);
        throw error;
      },
    );
}

/** Runs the writes of an item without a savepoint: a throw rolls back its batch (`BatchAbort`). */
function writeOrAbort<T>(writes: () => T): T {
  try {
    return writes();
  } catch (error) {
    throw new BatchAbort(error);
  }
}

/** Runs a plan synchronously; a plan that returns a promise is refused with `HANDLER_CONTRACT_INVALID`. */
function decide<T>(
  plan: TransactPlan<T, SqliteTransaction>,
  tx: SqliteTransaction,
  current: RunRecord | null,
  runId: string,
): PlanResult<T> {
  const result = plan(tx, current);
  if (isThenable(result)) {
    Promise.resolve(result).catch(() => undefined);
    throw new DocketError('HANDLER_CONTRACT_INVALID', 'SQLite transactions are synchronous', {
      operation: 'store.transact',
      runId,
    });
  }
  return result;
}

/** A pure plan decided on a remembered row; `null` when it threw (the row it saw may be stale: decided again). */
function decideOrNull<T>(
  plan: TransactPlan<T, SqliteTransaction>,
  remembered: RunRecord,
  runId: string,
): PlanResult<T> | null {
  try {
    return decide(plan, undefined as never, remembered, runId);
  } catch {
    return null;
  }
}
