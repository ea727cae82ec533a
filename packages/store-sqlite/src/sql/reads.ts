import type { CallbackCounts, HistoryEntry, RunStatus } from '@docket/core';
import {
  countCallbacks,
  countCallbacksByRun,
  type ListRunsRequest,
  type RunRecord,
  type RunStatsAnswer,
  type RunStatsRequest,
  rowToHistory,
  rowToRun,
  type SettledMinute,
  type SettledRequest,
} from '@docket/core/store';
import type { SqliteContext } from '../context.js';

/** `Store.getRun`. */
export function getRun(ctx: SqliteContext, namespace: string, runId: string): Promise<RunRecord | null> {
  return ctx.read(
    'store.getRun',
    ({ s }) => {
      const row = s.selectRun.get(namespace, runId);
      return row ? rowToRun(row) : null;
    },
    runId,
  );
}

/** `Store.getHistory`: a run's entries in `seq` order, none for a run of another namespace. */
export function getHistory(ctx: SqliteContext, namespace: string, runId: string): Promise<HistoryEntry[]> {
  return ctx.read(
    'store.getHistory',
    ({ s }) => (s.selectRun.get(namespace, runId) ? s.selectHistory.all(runId).map(rowToHistory) : []),
    runId,
  );
}

/** `Store.callbackCounts`: a run's callback events, counted as `RunInfo.callbacks` shows them. */
export function callbackCounts(ctx: SqliteContext, namespace: string, runId: string): Promise<CallbackCounts> {
  return ctx.read('store.callbackCounts', ({ s }) => countCallbacks(s.countEvents.all(runId, namespace)), runId);
}

/** `Store.callbackCountsOf`: one statement for a page of runs. */
export function callbackCountsOf(
  ctx: SqliteContext,
  namespace: string,
  runIds: readonly string[],
): Promise<CallbackCounts[]> {
  return ctx.read('store.callbackCountsOf', ({ s }) =>
    countCallbacksByRun(runIds, s.countEventsOf.all(JSON.stringify(runIds), namespace)),
  );
}

/** `Store.runStats`: the counts the triggers keep, dead letters and the earliest due run, from indexes. */
export function runStats(ctx: SqliteContext, request: RunStatsRequest): Promise<RunStatsAnswer> {
  return ctx.read('store.runStats', ({ s }) => {
    const { namespace, taskName, now } = request;
    const params = { namespace, task: taskName, now };
    const counts = s.statsCounts.all(params).map((row) => ({
      taskName: row.task_name,
      taskVersion: row.task_version,
      status: row.status as RunStatus,
      count: Number(row.n),
    }));
    const deadLetters = Number(s.statsDeadLetters.get(params)?.n ?? 0);
    const due = s.statsOldestDue.get(params)?.due ?? null;
    return { counts, deadLetters, oldestDueAt: due === null ? null : Number(due) };
  });
}

/** `Store.settledPerMinute`: the per-minute counters from the minute holding `since`. */
export function settledPerMinute(ctx: SqliteContext, request: SettledRequest): Promise<SettledMinute[]> {
  return ctx.read('store.settledPerMinute', ({ s }) =>
    s.settledMinutes
      .all(request.namespace, request.since - (request.since % 60_000))
      .map((row) => ({ minute: Number(row.minute), count: Number(row.n) })),
  );
}

/** Above every id: a listing from the newest. */
export const NEWEST = '\uffff';

/** `Store.listRuns`: runs newest first below a cursor, optionally of one task and one status. */
export function listRuns(ctx: SqliteContext, request: ListRunsRequest): Promise<RunRecord[]> {
  return ctx.read('store.listRuns', ({ s }) =>
    s
      .listRuns(request.namespace, request.taskName, request.status, request.before ?? NEWEST, request.limit)
      .map(rowToRun),
  );
}
