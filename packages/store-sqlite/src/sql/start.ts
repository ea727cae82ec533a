import { DocketError } from '@docket/core';
import type {
  CreateRunRequest,
  CreateRunResult,
  CreateRunsRequest,
  CreateRunsResult,
  RunRecord,
} from '@docket/core/store';
import { planStarts } from '@docket/core/store';
import Database from 'better-sqlite3';
import type { OpenConnection, SqliteContext } from '../context.js';
import { storageFailure } from '../errors.js';
import { countMove } from '../writes/run-counts.js';

/** The statements `startStatements` prepares. */
export interface StartStatements {
  countRuns: Database.Statement<[string], { n: number }>;
}

/** The start's own statements (the run and history inserts are shared: `../statements.ts`). */
export function startStatements(db: Database.Database): StartStatements {
  return {
    /** The number of runs of a namespace, for `maxRuns`. */
    countRuns: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM docket_runs WHERE namespace = ?'),
  };
}

/**
 * `Store.createRun`: the run and its first history entry, unless its idempotency key names a run already or the
 * namespace is at `maxRuns`. In the batch's transaction, so the check and the insert are one atomic step.
 */
export function createRun(ctx: SqliteContext, request: CreateRunRequest): Promise<CreateRunResult> {
  const { run } = request;
  return ctx.write(
    'task.start',
    ({ s }): CreateRunResult => {
      if (run.idempotencyKey !== null) {
        const existing = s.selectRunByKey.get(run.namespace, run.taskName, run.idempotencyKey);
        if (existing) return { kind: 'existing', run: s.runOf(existing) };
      }
      if (request.maxRuns !== null && (s.start.countRuns.get(run.namespace)?.n ?? 0) >= request.maxRuns) {
        return { kind: 'capacity' };
      }
      s.insertRun(run);
      countMove(s, run.namespace, run.taskName, run.taskVersion, null, run.status);
      s.insertHistory(run, request.history);
      return { kind: 'created', run };
    },
    run.runId,
  );
}

/**
 * `Store.createRuns`: reads the runs the keys name, lets core's `planStarts` decide, and inserts the new runs with
 * their first history entries, all in the batch's transaction (one savepoint: all of them or none). With `tx`, the
 * same synchronously inside the application's open transaction instead (see `inApplicationTransaction`).
 */
export function createRuns(ctx: SqliteContext, request: CreateRunsRequest): Promise<CreateRunsResult> {
  if (request.tx !== undefined) return inApplicationTransaction(ctx, request);
  return ctx.write('task.startMany', (open) => createRunsNow(open, request), request.runs[0]?.run.runId);
}

/** The body of `createRuns` on an open connection, inside whatever transaction is open on it. */
function createRunsNow({ s }: OpenConnection, request: CreateRunsRequest): CreateRunsResult {
  const first = request.runs[0]?.run;
  const existing = new Map<string, RunRecord>();
  for (const { run } of request.runs) {
    if (run.idempotencyKey === null || existing.has(run.idempotencyKey)) continue;
    const found = s.selectRunByKey.get(run.namespace, run.taskName, run.idempotencyKey);
    if (found) existing.set(run.idempotencyKey, s.runOf(found));
  }
  const plan = planStarts(request.runs, existing);
  if (plan.kind !== 'ok') return plan;
  if (request.maxRuns !== null && first !== undefined && plan.insert.length > 0) {
    if ((s.start.countRuns.get(first.namespace)?.n ?? 0) + plan.insert.length > request.maxRuns)
      return { kind: 'capacity' };
  }
  for (const index of plan.insert) {
    const { run, history } = request.runs[index] as CreateRunsRequest['runs'][number];
    s.insertRun(run);
    countMove(s, run.namespace, run.taskName, run.taskVersion, null, run.status);
    s.insertHistory(run, history);
  }
  return plan;
}

/**
 * A start inside the application's transaction: `tx` is a drizzle `db.transaction` handle on the store's database,
 * or that better-sqlite3 `Database` itself while its `db.transaction(fn)` runs. The rows are written synchronously,
 * before this returns; they exist only if the application commits. Anything else is `CONFIG_INVALID`.
 */
function inApplicationTransaction(ctx: SqliteContext, request: CreateRunsRequest): Promise<CreateRunsResult> {
  const open = ctx.live();
  const tx = request.tx as { session?: { client?: unknown } } | null;
  const client = tx instanceof Database ? tx : tx?.session?.client;
  if (client !== open.db || !open.db.inTransaction) {
    return Promise.reject(
      new DocketError(
        'CONFIG_INVALID',
        client === open.db
          ? 'tx must be used inside its transaction: no transaction is open on the database'
          : "tx must be a transaction of the store's own database (the database given to sqliteStore)",
        { operation: 'task.start' },
      ),
    );
  }
  try {
    return Promise.resolve(createRunsNow(open, request));
  } catch (error) {
    return Promise.reject(storageFailure(error, 'task.start'));
  }
}
