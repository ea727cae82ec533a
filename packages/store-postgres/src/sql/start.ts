import type { CreateRunRequest, CreateRunResult, RunRow } from '@docket/core/store';
import { rowToRun } from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PgContext } from '../context.js';
import { insertRuns, rowsOf } from './run-writes.js';

/**
 * `Store.createRun` for a namespace capped by `maxRuns`: its starts take turns under an advisory lock, so two cannot
 * both take the last place. Uncapped starts go through the group commit (`fast/group-commit.ts`).
 */
export function createCappedRun(ctx: PgContext, request: CreateRunRequest, maxRuns: number): Promise<CreateRunResult> {
  const { run } = request;
  return ctx.inTransaction(
    'task.start',
    async (tx): Promise<CreateRunResult> => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${run.namespace}:capacity`}, 0))`);
      if (run.idempotencyKey !== null) {
        const existing = await rowsOf<RunRow>(
          tx,
          sql`SELECT * FROM ${ctx.q.runs} WHERE namespace = ${run.namespace} AND task_name = ${run.taskName} AND idempotency_key = ${run.idempotencyKey}`,
        );
        if (existing[0]) return { kind: 'existing', run: rowToRun(existing[0]) };
      }
      const [count] = await rowsOf<{ n: string | number }>(
        tx,
        sql`SELECT count(*) AS n FROM ${ctx.q.runs} WHERE namespace = ${run.namespace}`,
      );
      if (Number(count?.n ?? 0) >= maxRuns) return { kind: 'capacity' };
      const inserted = await insertRuns(tx, ctx.tables, [request]);
      if (!inserted.has(run.runId)) throw new Error('internal: a capped start was not inserted');
      return { kind: 'created', run };
    },
    { runId: run.runId, ...(run.idempotencyKey === null ? {} : { idempotencyKey: run.idempotencyKey }) },
  );
}
