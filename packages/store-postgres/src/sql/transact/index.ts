import type { PlanResult, RunRecord, RunRow, TransactOptions, TransactPlan } from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PostgresTransaction } from '../../connection.js';
import type { PgContext } from '../../context.js';
import { queryOn, rowsOf } from '../../writes/run-writes.js';

/** Marks that the plan threw nothing (an application may throw `undefined`). */
const NO_ERROR = Symbol('no error');

/** A batched commit of pure plans (`batch.ts`'s `transactBatcher`). */
export type GroupedTransact = <T>(
  namespace: string,
  runId: string,
  plan: TransactPlan<T, PostgresTransaction>,
) => Promise<T>;

/**
 * `Store.transact`. A run whose claim is still held open takes its pure plan into the claim's transaction (or waits
 * for that commit); other pure plans go through the batched commit; a plan with an effect or a check gets a transaction
 * of its own: the row locked, the plan, its write.
 */
export function transact<T>(
  ctx: PgContext,
  batched: GroupedTransact,
  namespace: string,
  runId: string,
  plan: TransactPlan<T, PostgresTransaction>,
  options?: TransactOptions,
): Promise<T> {
  const holding = ctx.held.ended(runId);
  if (holding !== undefined) {
    const fused = options?.pure === true ? ctx.held.fuse(namespace, runId, plan) : undefined;
    return fused ?? holding.then(() => transact(ctx, batched, namespace, runId, plan, options));
  }
  if (options?.pure === true) return batched<T>(namespace, runId, plan);
  ctx.known.forget(runId);
  let written: RunRecord | null = null;
  let planError: unknown = NO_ERROR;
  return ctx
    .inTransaction<T>(
      'store.transact',
      async (tx) => {
        const found = await rowsOf<RunRow>(
          tx,
          sql`SELECT * FROM ${ctx.q.runs} WHERE namespace = ${namespace} AND run_id = ${runId} FOR UPDATE`,
        );
        const [current = null] = await ctx.tables.versions.runsOf(queryOn(tx), found);
        let planned: PlanResult<T>;
        try {
          planned = (await plan(tx, current)) as PlanResult<T>;
        } catch (error) {
          planError = error;
          throw error;
        }
        const { write, value } = planned;
        if (write !== null) {
          if (current === null) throw new Error('internal: write for a missing run');
          await ctx.applyWrite(tx, current, write);
          written = write.run;
        }
        return value;
      },
      { runId },
      () => planError,
    )
    .then((value) => {
      if (written !== null) ctx.known.committed(written);
      return value;
    });
}
