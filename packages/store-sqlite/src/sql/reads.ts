import type { CallbackCounts, HistoryEntry } from '@docket/core';
import { countCallbacks, type ListRunsRequest, type RunRecord, rowToHistory, rowToRun } from '@docket/core/store';
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
