import { claimDueAt, claimRankOf, compareClaimOrder, isClaimableAt, isRecoverableAt } from '../../machine/claimable.js';
import type { CallbackCounts, HistoryEntry, RunRecord } from '../../machine/run-types.js';
import { isTerminal } from '../../machine/run-types.js';
import { DocketError } from '../../util/errors.js';
import type { Json } from '../../util/json.js';
import { isThenable } from '../../util/thenable.js';
import { countCallbacks } from '../callback-counts.js';
import { checkWrite } from '../checks.js';
import type {
  CreateRunRequest,
  CreateRunResult,
  CreateRunsRequest,
  CreateRunsResult,
  ListRunsRequest,
  RunStatsAnswer,
  RunStatsRequest,
  SelectRequest,
  SettledMinute,
  SettledRequest,
  TaskKey,
  TransactPlan,
} from '../contract.js';
import { planStarts } from '../start-plan.js';
import { clone, key, type MemoryState, planEach } from './state.js';

/**
 * The handle effects and checks receive from the memory store: a staging area for the application's own rows that
 * becomes visible only when the transaction commits.
 */
export interface MemoryTransaction {
  /** Stages a row in an application table. */
  put(table: string, key: string, value: Json): void;
  /** Reads a row, staged writes of this transaction first. */
  get(table: string, key: string): Json | undefined;
}

/** `Store.createRun`: the existing run for a known key, `capacity` at `maxRuns`, or the new run and its entry. */
export function createRun(m: MemoryState, request: CreateRunRequest): Promise<CreateRunResult> {
  return m.exclusive((): CreateRunResult => {
    const { run } = request;
    const idemKey = m.idempotencyKeyOf(run);
    if (idemKey !== null) {
      const existingId = m.idempotency.get(idemKey);
      const existing = existingId === undefined ? undefined : m.runs.get(key(run.namespace, existingId));
      if (existing) return { kind: 'existing', run: clone(existing) };
    }
    if (request.maxRuns !== null) {
      let live = 0;
      for (const r of m.runs.values()) if (r.namespace === run.namespace) live++;
      if (live >= request.maxRuns) return { kind: 'capacity' };
    }
    m.runs.set(key(run.namespace, run.runId), clone(run));
    m.history.set(key(run.namespace, run.runId), [clone(request.history)]);
    if (idemKey !== null) m.idempotency.set(idemKey, run.runId);
    return { kind: 'created', run: clone(run) };
  });
}

/** `Store.createRuns`: core's plan over the runs the keys name, then every new run, all in one exclusive step. */
export function createRuns(m: MemoryState, request: CreateRunsRequest): Promise<CreateRunsResult> {
  if (request.tx !== undefined) {
    const message = 'the memory store has no application transactions: start without tx';
    return Promise.reject(new DocketError('CONFIG_INVALID', message, { operation: 'task.start' }));
  }
  return m.exclusive((): CreateRunsResult => {
    const existing = new Map<string, RunRecord>();
    for (const { run } of request.runs) {
      const idemKey = m.idempotencyKeyOf(run);
      const id = idemKey === null ? undefined : m.idempotency.get(idemKey);
      const found = id === undefined ? undefined : m.runs.get(key(run.namespace, id));
      if (found && run.idempotencyKey !== null) existing.set(run.idempotencyKey, clone(found));
    }
    const plan = planStarts(request.runs, existing);
    if (plan.kind !== 'ok') return plan;
    const namespace = request.runs[0]?.run.namespace;
    if (request.maxRuns !== null && plan.insert.length > 0) {
      let live = 0;
      for (const r of m.runs.values()) if (r.namespace === namespace) live++;
      if (live + plan.insert.length > request.maxRuns) return { kind: 'capacity' };
    }
    for (const index of plan.insert) {
      const { run, history } = request.runs[index] as CreateRunsRequest['runs'][number];
      m.runs.set(key(run.namespace, run.runId), clone(run));
      m.history.set(key(run.namespace, run.runId), [clone(history)]);
      const idemKey = m.idempotencyKeyOf(run);
      if (idemKey !== null) m.idempotency.set(idemKey, run.runId);
    }
    return plan;
  });
}

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

/**
 * `Store.transact`: core's plan with a copy of the run and a staging transaction; its write and staged rows land
 * together, or nothing does. A promise from the plan is refused unless the store was made with `asyncTransactions`.
 */
export function transact<T>(
  m: MemoryState,
  namespace: string,
  runId: string,
  plan: TransactPlan<T, MemoryTransaction>,
): Promise<T> {
  return m.exclusive(async () => {
    const staged = new Map<string, Map<string, Json>>();
    const tx: MemoryTransaction = {
      put(table, rowKey, value) {
        const rows = staged.get(table) ?? new Map<string, Json>();
        staged.set(table, rows);
        rows.set(rowKey, clone(value));
      },
      get(table, rowKey) {
        return clone(staged.get(table)?.get(rowKey) ?? m.appTables.get(table)?.get(rowKey));
      },
    };
    const current = m.runs.get(key(namespace, runId));
    let result = plan(tx, current ? clone(current) : null);
    if (isThenable(result)) {
      if (!m.capabilities.asyncTransactions) {
        (result as Promise<unknown>).catch(() => undefined);
        throw new DocketError('HANDLER_CONTRACT_INVALID', 'this store runs transactions synchronously', {
          operation: 'store.transact',
          runId,
        });
      }
      result = await result;
    }
    if (result.write !== null) {
      if (!current) throw new Error('internal: write for a missing run');
      checkWrite(current, result.write);
      m.applyWrite(result.write);
    }
    for (const [table, rows] of staged) {
      const target = m.appTables.get(table) ?? new Map<string, Json>();
      m.appTables.set(table, target);
      for (const [rowKey, value] of rows) target.set(rowKey, value);
    }
    return result.value;
  });
}

function taskMatches(run: RunRecord, tasks: readonly TaskKey[]): boolean {
  return tasks.some((t) => t.name === run.taskName && t.version === run.taskVersion);
}

function select(
  m: MemoryState,
  request: Pick<SelectRequest, 'namespace' | 'limit' | 'plan'>,
  match: (run: RunRecord) => boolean,
  order: (a: RunRecord, b: RunRecord) => number,
): RunRecord[] {
  const candidates = [...m.runs.values()]
    .filter((run) => run.namespace === request.namespace && match(run))
    .sort(order);
  return planEach(candidates, request.limit, request.plan, (run, write) => {
    checkWrite(run, write);
    m.applyWrite(write);
    return clone(write.run);
  });
}

/** `Store.claimDue`: the runs of the given tasks claimable at `now`, in the claim order (`CLAIMABLE`). */
export function claimDue(m: MemoryState, request: SelectRequest): Promise<RunRecord[]> {
  const due = (run: RunRecord) => isClaimableAt(run, request.now) && taskMatches(run, request.tasks);
  return m.exclusive(() => select(m, request, due, (a, b) => compareClaimOrder(claimRankOf(a), claimRankOf(b))));
}

/** `Store.recoverExpired`: running or pausing runs whose lease expired, earliest expiry first. */
export function recoverExpired(m: MemoryState, request: Omit<SelectRequest, 'tasks'>): Promise<RunRecord[]> {
  const expired = (run: RunRecord) => isRecoverableAt(run, request.now);
  return m.exclusive(() =>
    select(
      m,
      request,
      expired,
      (a, b) => (a.lease?.expiresAt ?? 0) - (b.lease?.expiresAt ?? 0) || a.createdAt - b.createdAt,
    ),
  );
}

/** `Store.nextDueAt`. */
export async function nextDueAt(m: MemoryState, namespace: string, tasks: readonly TaskKey[]): Promise<number | null> {
  let earliest: number | null = null;
  for (const run of m.runs.values()) {
    if (run.namespace !== namespace || !taskMatches(run, tasks)) continue;
    const due = claimDueAt(run);
    if (due !== null && (earliest === null || due < earliest)) earliest = due;
  }
  return earliest;
}

/** `Store.listRuns`: newest first, below a cursor, optionally of one task and status. */
export async function listRuns(m: MemoryState, request: ListRunsRequest): Promise<RunRecord[]> {
  return [...m.runs.values()]
    .filter((r) => r.namespace === request.namespace)
    .filter((r) => request.taskName === null || r.taskName === request.taskName)
    .filter((r) => request.status === null || r.status === request.status)
    .filter((r) => request.before === null || r.runId < request.before)
    .sort((a, b) => (a.runId < b.runId ? 1 : -1))
    .slice(0, request.limit)
    .map(clone);
}
