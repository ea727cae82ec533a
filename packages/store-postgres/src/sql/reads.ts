import type { CallbackCounts, HistoryEntry, RunStatus } from '@docket/core';
import {
  CHILD_COLUMNS,
  type ChildRecord,
  type ChildRow,
  countCallbacks,
  countCallbacksByRun,
  type HistoryRow,
  keyPrefixEnd,
  type ListChildrenRequest,
  type ListedRun,
  type ListRunsRequest,
  listedColumns,
  listedRunOf,
  type RunRecord,
  type RunRow,
  type RunStatsAnswer,
  type RunStatsRequest,
  rowToChild,
  rowToHistory,
  type SettledMinute,
  type SettledRequest,
} from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PgContext } from '../context.js';
import { queryOn, rowsOf } from '../writes/run-writes.js';

/** `Store.getRun`. */
export async function getRun(ctx: PgContext, namespace: string, runId: string): Promise<RunRecord | null> {
  const found = await rowsOf<RunRow>(
    ctx.live(),
    sql`SELECT * FROM ${ctx.q.runs} WHERE namespace = ${namespace} AND run_id = ${runId}`,
  );
  return (await ctx.tables.versions.runsOf(queryOn(ctx.live()), found))[0] ?? null;
}

/** `Store.getHistory`: a run's entries in `seq` order, none for a run of another namespace. */
export async function getHistory(ctx: PgContext, namespace: string, runId: string): Promise<HistoryEntry[]> {
  const found = await rowsOf<HistoryRow>(
    ctx.live(),
    sql`SELECT h.* FROM ${ctx.q.history} h JOIN ${ctx.q.runs} r ON r.run_id = h.run_id AND r.namespace = ${namespace}
        WHERE h.run_id = ${runId} ORDER BY h.seq`,
  );
  return found.map(rowToHistory);
}

/** `Store.callbackCounts`: a run's callback events, counted as `RunInfo.callbacks` shows them. */
export async function callbackCounts(ctx: PgContext, namespace: string, runId: string): Promise<CallbackCounts> {
  const found = await rowsOf<{ status: string; n: string | number }>(
    ctx.live(),
    sql`SELECT status, count(*) AS n FROM ${ctx.q.events} WHERE run_id = ${runId} AND namespace = ${namespace} GROUP BY status`,
  );
  return countCallbacks(found);
}

/** `Store.callbackCountsOf`: one query for a page of runs. */
export async function callbackCountsOf(
  ctx: PgContext,
  namespace: string,
  runIds: readonly string[],
): Promise<CallbackCounts[]> {
  if (runIds.length === 0) return [];
  const found = await rowsOf<{ run_id: string; status: string; n: string | number }>(
    ctx.live(),
    sql`SELECT run_id, status, count(*) AS n FROM ${ctx.q.events}
        WHERE run_id = ANY(${`{${runIds.join(',')}}`}::text[]) AND namespace = ${namespace} GROUP BY run_id, status`,
  );
  return countCallbacksByRun(runIds, found);
}

/**
 * `Store.runStats`: the counts the triggers keep (summed over their shards), the dead letters and the earliest due
 * claimable run, in one round trip.
 */
export async function runStats(ctx: PgContext, request: RunStatsRequest): Promise<RunStatsAnswer> {
  const { namespace, taskName, now } = request;
  const task = (column: string) => (taskName === null ? sql`` : sql` AND ${sql.raw(column)} = ${taskName}`);
  const found = await rowsOf<{
    task_name: string | null;
    task_version: string | null;
    status: string | null;
    n: string;
  }>(
    ctx.live(),
    sql`SELECT task_name, task_version, status, sum(n)::text AS n FROM ${ctx.q.runCounts}
          WHERE namespace = ${namespace}${task('task_name')} GROUP BY 1, 2, 3 HAVING sum(n) > 0
        UNION ALL SELECT NULL, NULL, 'dead_letter', count(*)::text FROM ${ctx.q.events}
          WHERE namespace = ${namespace} AND status = 'dead_letter'${task('task_name')}
        UNION ALL SELECT NULL, NULL, NULL, min(claim_due_at)::text FROM ${ctx.q.runs}
          WHERE namespace = ${namespace}${task('task_name')} AND claim_due_at IS NOT NULL AND claim_due_at <= ${now}::double precision`,
  );
  const answer: RunStatsAnswer = { counts: [], deadLetters: 0, oldestDueAt: null };
  for (const row of found) {
    if (row.status === null) answer.oldestDueAt = row.n === null ? null : Number(row.n);
    else if (row.task_name === null) answer.deadLetters = Number(row.n);
    else {
      answer.counts.push({
        taskName: row.task_name,
        taskVersion: row.task_version as string,
        status: row.status as RunStatus,
        count: Number(row.n),
      });
    }
  }
  return answer;
}

/** `Store.listRuns`: runs newest first below a cursor, optionally of one task, one status and one group. */
export async function listRuns(ctx: PgContext, request: ListRunsRequest): Promise<ListedRun[]> {
  const filters = [sql`namespace = ${request.namespace}`];
  if (request.before !== null) filters.push(sql`run_id < ${request.before}`);
  if (request.taskName !== null) filters.push(sql`task_name = ${request.taskName}`);
  if (request.status !== null) filters.push(sql`status = ${request.status}`);
  if (request.group !== undefined) filters.push(sql`group_key = ${request.group}`);
  if (request.parentRunId !== undefined) filters.push(sql`parent_run_id = ${request.parentRunId}`);
  if (request.idempotencyKey !== undefined) filters.push(sql`idempotency_key = ${request.idempotencyKey}`);
  const prefix = request.idempotencyKeyPrefix;
  if (prefix !== undefined) {
    filters.push(sql`idempotency_key >= ${prefix} AND idempotency_key < ${keyPrefixEnd(prefix)}`);
  }
  if (request.from !== undefined) filters.push(sql`run_id >= ${request.from}`);
  const columns = listedColumns(request.payloads);
  const found = await rowsOf<Record<string, unknown>>(
    ctx.live(),
    sql`SELECT ${sql.raw(columns.join(', '))} FROM ${ctx.q.runs} WHERE ${sql.join(filters, sql` AND `)}
        ORDER BY run_id DESC LIMIT ${request.limit}`,
  );
  return found.map((row) => listedRunOf(columns.map((column) => row[column])));
}

/** `Store.listChildren`: one page's children in id order. */
export async function listChildren(ctx: PgContext, request: ListChildrenRequest): Promise<ChildRecord[]> {
  const found = await rowsOf<ChildRow>(
    ctx.live(),
    sql`SELECT ${sql.raw(CHILD_COLUMNS.join(', '))} FROM ${ctx.q.runs} WHERE namespace = ${request.namespace}
        AND parent_run_id = ${request.parentRunId} AND parent_page = ${request.page} ORDER BY run_id`,
  );
  return found.map(rowToChild);
}

/** `Store.settledPerMinute`: the per-minute counters the update trigger keeps, summed over their shards. */
export async function settledPerMinute(ctx: PgContext, request: SettledRequest): Promise<SettledMinute[]> {
  const from = request.since - (request.since % 60_000);
  const found = await rowsOf<{ minute: number | string; n: string }>(
    ctx.live(),
    sql`SELECT minute, sum(n)::text AS n FROM ${ctx.q.settledMinutes}
        WHERE namespace = ${request.namespace} AND minute >= ${from}::double precision GROUP BY 1 ORDER BY 1`,
  );
  return found.map((row) => ({ minute: Number(row.minute), count: Number(row.n) }));
}
