import { claimDueAt } from '../../machine/claimable.js';
import type { CallbackCounts, HistoryEntry, RunRecord } from '../../machine/run-types.js';
import { isTerminal } from '../../machine/run-types.js';
import { countCallbacks } from '../callback-counts.js';
import type {
  ListChildrenRequest,
  ListRunsRequest,
  RunStatsAnswer,
  RunStatsRequest,
  SettledMinute,
  SettledRequest,
} from '../contract.js';
import { clone, key, type MemoryState } from './state.js';

/** `Store.getRun`, `getHistory` and `callbackCounts`, as verbs. */
export const runReads = {
  getRun: async (m: MemoryState, namespace: string, runId: string): Promise<RunRecord | null> =>
    clone(m.runs.get(key(namespace, runId)) ?? null),
  getHistory: async (m: MemoryState, namespace: string, runId: string): Promise<HistoryEntry[]> =>
    clone(m.history.get(key(namespace, runId)) ?? []),
  callbackCounts: async (m: MemoryState, namespace: string, runId: string): Promise<CallbackCounts> => {
    const own: { status: string; n: number }[] = [];
    for (const event of m.events.values()) {
      if (event.namespace === namespace && event.runId === runId) own.push({ status: event.status, n: 1 });
    }
    return countCallbacks(own);
  },
  callbackCountsOf: async (m: MemoryState, namespace: string, runIds: readonly string[]): Promise<CallbackCounts[]> =>
    Promise.all(runIds.map((runId) => runReads.callbackCounts(m, namespace, runId))),
  runStats: async (m: MemoryState, request: RunStatsRequest): Promise<RunStatsAnswer> => {
    const counts = new Map<string, RunStatsAnswer['counts'][number]>();
    let oldestDueAt: number | null = null;
    for (const run of m.runs.values()) {
      if (run.namespace !== request.namespace) continue;
      if (request.taskName !== null && run.taskName !== request.taskName) continue;
      const id = `${run.taskName}\u0000${run.taskVersion}\u0000${run.status}`;
      const row = counts.get(id) ?? {
        taskName: run.taskName,
        taskVersion: run.taskVersion,
        status: run.status,
        count: 0,
      };
      row.count++;
      counts.set(id, row);
      const due = claimDueAt(run);
      if (due !== null && due <= request.now && (oldestDueAt === null || due < oldestDueAt)) oldestDueAt = due;
    }
    let deadLetters = 0;
    for (const event of m.events.values()) {
      if (event.namespace !== request.namespace || event.status !== 'dead_letter') continue;
      if (request.taskName === null || event.taskName === request.taskName) deadLetters++;
    }
    return { counts: [...counts.values()], deadLetters, oldestDueAt };
  },
  /** Counts history entries into a finished status, by minute: the memory store keeps no counters. */
  settledPerMinute: async (m: MemoryState, request: SettledRequest): Promise<SettledMinute[]> => {
    const from = request.since - (request.since % 60_000);
    const minutes = new Map<number, number>();
    for (const [id, entries] of m.history) {
      if (!id.startsWith(key(request.namespace, ''))) continue;
      for (const entry of entries) {
        if (!isTerminal(entry.to) || (entry.from !== null && isTerminal(entry.from))) continue;
        const at = Date.parse(entry.at);
        const minute = at - (at % 60_000);
        if (minute >= from) minutes.set(minute, (minutes.get(minute) ?? 0) + 1);
      }
    }
    return [...minutes].sort((a, b) => a[0] - b[0]).map(([minute, count]) => ({ minute, count }));
  },
};

/** `Store.listRuns`: newest first, below a cursor, optionally of one task and status. */
export async function listRuns(m: MemoryState, request: ListRunsRequest): Promise<RunRecord[]> {
  return [...m.runs.values()]
    .filter((r) => r.namespace === request.namespace)
    .filter((r) => request.taskName === null || r.taskName === request.taskName)
    .filter((r) => request.status === null || r.status === request.status)
    .filter((r) => request.group === undefined || (r.group ?? '') === request.group)
    .filter((r) => request.parentRunId === undefined || r.parent?.runId === request.parentRunId)
    .filter((r) => request.before === null || r.runId < request.before)
    .filter((r) => request.idempotencyKey === undefined || r.idempotencyKey === request.idempotencyKey)
    .filter((r) => request.idempotencyKeyPrefix === undefined || keyStartsWith(r, request.idempotencyKeyPrefix))
    .filter((r) => request.from === undefined || r.runId >= request.from)
    .sort((a, b) => (a.runId < b.runId ? 1 : -1))
    .slice(0, request.limit)
    .map(clone);
}

function keyStartsWith(run: RunRecord, prefix: string): boolean {
  return run.idempotencyKey?.startsWith(prefix) === true;
}

/** `Store.listChildren`: one page's children, in id order. */
export async function listChildren(m: MemoryState, request: ListChildrenRequest): Promise<RunRecord[]> {
  return [...m.runs.values()]
    .filter(
      (r) =>
        r.namespace === request.namespace && r.parent?.runId === request.parentRunId && r.parent.page === request.page,
    )
    .sort((a, b) => (a.runId < b.runId ? -1 : 1))
    .map(clone);
}
