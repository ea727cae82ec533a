import type { PlanResult, RunRecord, RunRow, TransactOptions, TransactPlan } from '@docket/core/store';
import { rowToRun } from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PostgresTransaction } from '../connection.js';
import type { PgContext } from '../context.js';
import { rowsOf } from './run-writes.js';

/** A group commit of pure plans (`fast/group-commit.ts`'s `transactBatcher`). */
export type GroupedTransact = <T>(
  namespace: string,
  runId: string,
  plan: TransactPlan<T, PostgresTransaction>,
) => Promise<T>;

/**
 * `Store.transact`. A run whose claim is still held open takes its pure plan into the claim's transaction (or waits
 * for that commit); other pure plans go through the group commit; a plan with an effect or a check gets a transaction
 * of its own: the row locked, the plan, its write.
 */
export function transact<T>(
  ctx: PgContext,
  grouped: GroupedTransact,
  namespace: string,
  runId: string,
  plan: TransactPlan<T, PostgresTransaction>,
  options?: TransactOptions,
): Promise<T> {
  const holding = ctx.held.ended(runId);
  if (holding !== undefined) {
    const fused = options?.pure === true ? ctx.held.fuse(namespace, runId, plan) : undefined;
    return fused ?? holding.then(() => transact(ctx, grouped, namespace, runId, plan, options));
  }
  if (options?.pure === true) return grouped<T>(namespace, runId, plan);
  ctx.known.forget(runId);
  let written: RunRecord | null = null;
  return ctx
    .inTransaction<T>(
      'store.transact',
      async (tx) => {
        const found = await rowsOf<RunRow>(
          tx,
          sql`SELECT * FROM ${ctx.q.runs} WHERE namespace = ${namespace} AND run_id = ${runId} FOR UPDATE`,
        );
        const current = found[0] ? rowToRun(found[0]) : null;
        const { write, value } = (await plan(tx, current)) as PlanResult<T>;
        if (write !== null) {
          if (current === null) throw new Error('internal: write for a missing run');
          await ctx.applyWrite(tx, current, write);
          written = write.run;
        }
        return value;
      },
      { runId },
    )
    .then((value) => {
      if (written !== null) ctx.known.committed(written);
      return value;
    });
}
