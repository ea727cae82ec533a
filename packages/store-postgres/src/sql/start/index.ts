import { DocketError } from '@docket/core';
import type {
  CreateRunRequest,
  CreateRunResult,
  CreateRunsRequest,
  CreateRunsResult,
  RunRecord,
  RunRow,
} from '@docket/core/store';
import { planStarts } from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PostgresTransaction } from '../../connection.js';
import type { PgContext } from '../../context.js';
import { classify, OutcomeTracker } from '../../errors.js';
import type { Session } from '../../wire/session.js';
import { insertRuns, queryOn, rowsOf } from '../../writes/run-writes.js';
import { insertInOneTrip } from './batch.js';

/**
 * `Store.createRun` for a namespace capped by `maxRuns`: its starts take turns under an advisory lock, so two cannot
 * both take the last place. Uncapped starts go through the batched commit (`batch.ts`).
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
        const [found] = await ctx.tables.versions.runsOf(queryOn(tx), existing);
        if (found) return { kind: 'existing', run: found };
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

/**
 * A bulk start with no idempotency key and no cap has nothing to read first: `BEGIN`, the prepared insert, the
 * notification and `COMMIT` go in one message, as the batched commit sends single starts.
 */
async function keylessInOneTrip(
  ctx: PgContext,
  session: Session,
  request: CreateRunsRequest,
): Promise<CreateRunsResult> {
  const plan = planStarts(request.runs, new Map());
  const outcome = new OutcomeTracker();
  const requests = request.runs.map((r) => ({ ...r, maxRuns: null }));
  let inserted: Set<string>;
  try {
    inserted = await insertInOneTrip(session, ctx.tables, requests, outcome);
  } catch (error) {
    throw classify(error, outcome, 'task.startMany', {});
  }
  if (inserted.size !== requests.length) throw new Error('internal: a new run id was already taken');
  return plan;
}

/** Thrown inside a bulk start whose key a concurrent start took after it was read: the transaction runs again. */
class KeyTakenMeanwhile extends Error {}

/**
 * `Store.createRuns`: in one transaction (under the namespace's capacity lock when `maxRuns` is set), reads the runs
 * the keys name, lets core's `planStarts` decide, and inserts the new runs and their history in one statement. A key
 * that a concurrent start took between the read and the insert rolls everything back and the transaction runs again.
 */
export async function createRuns(ctx: PgContext, request: CreateRunsRequest): Promise<CreateRunsResult> {
  if (request.tx !== undefined) return inApplicationTransaction(ctx, request);
  const session = ctx.session;
  if (session !== undefined && request.maxRuns === null && request.runs.every((r) => r.run.idempotencyKey === null)) {
    return keylessInOneTrip(ctx, session, request);
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.inTransaction('task.startMany', (tx) => createRunsIn(ctx, tx, request));
    } catch (error) {
      if (!(error instanceof KeyTakenMeanwhile) || attempt >= 3) throw error;
    }
  }
}

/**
 * A start inside the application's transaction: `tx` is a drizzle node-postgres transaction, or a `pg` client inside
 * `BEGIN` (used through a drizzle database over it). It must reach this store's database and schema
 * (`CONFIG_INVALID` otherwise). The runs exist only if the application commits; their NOTIFY is delivered then.
 */
async function inApplicationTransaction(ctx: PgContext, request: CreateRunsRequest): Promise<CreateRunsResult> {
  const tx = await executorOf(request.tx);
  const [where] = await rowsOf<{ db: string; runs: string | null }>(
    tx,
    sql`SELECT current_database() AS db, to_regclass(${ctx.tables.runs})::text AS runs`,
  );
  const [own] = await rowsOf<{ db: string }>(ctx.live(), sql`SELECT current_database() AS db`);
  if (where?.runs === null || where?.db !== own?.db) {
    throw new DocketError('CONFIG_INVALID', "tx must be a transaction on the store's own database and schema", {
      operation: 'task.start',
    });
  }
  try {
    return await createRunsIn(ctx, tx, request);
  } catch (error) {
    if (!(error instanceof KeyTakenMeanwhile)) throw error;
    throw new DocketError(
      'IDEMPOTENCY_CONFLICT',
      'a concurrent start took one of these keys while this transaction wrote: roll it back and start again',
      { operation: 'task.start' },
    );
  }
}

/** A drizzle transaction as it is, a `pg` client wrapped in a drizzle database; anything else `CONFIG_INVALID`. */
async function executorOf(tx: unknown): Promise<PostgresTransaction> {
  const candidate = tx as { execute?: unknown; query?: unknown } | null;
  if (typeof candidate?.execute === 'function') return candidate as PostgresTransaction;
  if (typeof candidate?.query === 'function') {
    const { drizzle } = await import('drizzle-orm/node-postgres');
    return drizzle({ client: candidate as never }) as unknown as PostgresTransaction;
  }
  throw new DocketError('CONFIG_INVALID', 'tx must be a drizzle node-postgres transaction or a pg client in BEGIN', {
    operation: 'task.start',
  });
}

async function createRunsIn(
  ctx: PgContext,
  tx: PostgresTransaction,
  request: CreateRunsRequest,
): Promise<CreateRunsResult> {
  const first = request.runs[0]?.run;
  if (first === undefined) return { kind: 'ok', insert: [], answers: [] };
  if (request.maxRuns !== null) {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${first.namespace}:capacity`}, 0))`);
  }
  const keys = [...new Set(request.runs.map((r) => r.run.idempotencyKey).filter((k): k is string => k !== null))];
  const existing = new Map<string, RunRecord>();
  if (keys.length > 0) {
    const rows = await rowsOf<RunRow>(
      tx,
      sql`SELECT * FROM ${ctx.q.runs} WHERE namespace = ${first.namespace} AND task_name = ${first.taskName}
        AND idempotency_key IN ${keys}`,
    );
    for (const run of await ctx.tables.versions.runsOf(queryOn(tx), rows))
      existing.set(run.idempotencyKey as string, run);
  }
  const plan = planStarts(request.runs, existing);
  if (plan.kind !== 'ok' || plan.insert.length === 0) return plan;
  if (request.maxRuns !== null) {
    const [count] = await rowsOf<{ n: string | number }>(
      tx,
      sql`SELECT count(*) AS n FROM ${ctx.q.runs} WHERE namespace = ${first.namespace}`,
    );
    if (Number(count?.n ?? 0) + plan.insert.length > request.maxRuns) return { kind: 'capacity' };
  }
  const inserts = plan.insert.map((index) => ({ ...(request.runs[index] as CreateRunRequest), maxRuns: null }));
  const inserted = await insertRuns(tx, ctx.tables, inserts);
  if (inserted.size !== inserts.length) throw new KeyTakenMeanwhile('an idempotency key was taken meanwhile');
  return plan;
}
