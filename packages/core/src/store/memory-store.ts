import type { CallbackCounts, CallbackEventRecord, HistoryEntry, RunRecord } from '../machine/run-types.js';
import { isTerminal } from '../machine/run-types.js';
import { DocketError } from '../util/errors.js';
import type { Json } from '../util/json.js';
import { isThenable } from '../util/thenable.js';
import { countCallbacks } from './callback-counts.js';
import { checkEventWrite, checkWrite } from './checks.js';
import { decideCommand } from './commands.js';
import {
  CLAIMABLE_STATUSES,
  type CommandPlan,
  type CommandRequest,
  type CreateRunRequest,
  type CreateRunResult,
  type DefinitionRecord,
  type EventPlan,
  type RunWrite,
  type SelectRequest,
  type Store,
  type StoreCapabilities,
  type TaskKey,
  type TransactPlan,
  UNSETTLED_EVENT_STATUSES,
} from './contract.js';
import { definitionConflict } from './definitions.js';
import { isExpiredRun } from './retention.js';

/** Options of `memoryStore()`. */
export interface MemoryStoreOptions {
  /** Allow async plans (checks and effects) like a server database; default `false`, like SQLite. */
  asyncTransactions?: boolean;
}

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

/** Direct readers of what the memory store holds, for tests that check what was written. */
export interface MemoryStoreRaw {
  run(namespace: string, runId: string): RunRecord | undefined;
  history(namespace: string, runId: string): HistoryEntry[];
  events(namespace: string): CallbackEventRecord[];
  appRows(table: string): Map<string, Json>;
  runCount(): number;
  /** Everything the store holds as one canonical string, to prove an operation changed nothing. */
  dump(): string;
}

/** The in-memory reference `Store`: one process, no persistence, every guarantee of the contract. */
export interface MemoryStore extends Store<MemoryTransaction> {
  readonly raw: MemoryStoreRaw;
}

const key = (namespace: string, id: string) => `${namespace}\u0000${id}`;
const clone = <T>(value: T): T => structuredClone(value);

/** Creates the in-memory reference store. */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const capabilities: StoreCapabilities = {
    asyncTransactions: options.asyncTransactions ?? false,
    multiProcess: false,
  };
  const runs = new Map<string, RunRecord>();
  const history = new Map<string, HistoryEntry[]>();
  const events = new Map<string, CallbackEventRecord>();
  const idempotency = new Map<string, string>();
  const definitions = new Map<string, DefinitionRecord>();
  const appTables = new Map<string, Map<string, Json>>();
  const commands = new Map<string, { requestHash: string; result: Json; createdAt: number }>();
  let tail: Promise<unknown> = Promise.resolve();

  /** Serialises transactions so an async plan cannot interleave with another write. */
  function exclusive<T>(fn: () => Promise<T> | T): Promise<T> {
    const result = tail.then(fn, fn);
    tail = result.catch(() => undefined);
    return result;
  }

  function applyWrite(write: RunWrite): void {
    const k = key(write.run.namespace, write.run.runId);
    runs.set(k, clone(write.run));
    const list = history.get(k) ?? [];
    for (const entry of write.history) list.push(clone(entry));
    history.set(k, list);
    for (const event of write.events) {
      const ek = key(event.namespace, event.eventId);
      if (!events.has(ek)) events.set(ek, clone(event));
    }
  }

  function taskMatches(run: RunRecord, tasks: readonly TaskKey[]): boolean {
    return tasks.some((t) => t.name === run.taskName && t.version === run.taskVersion);
  }

  function select(
    request: Pick<SelectRequest, 'namespace' | 'limit' | 'plan'>,
    match: (run: RunRecord) => boolean,
    order: (run: RunRecord) => number,
  ): RunRecord[] {
    const candidates = [...runs.values()]
      .filter((run) => run.namespace === request.namespace && match(run))
      .sort((a, b) => order(a) - order(b) || a.createdAt - b.createdAt);
    return planEach(candidates, request.limit, request.plan, (run, write) => {
      checkWrite(run, write);
      applyWrite(write);
      return clone(write.run);
    });
  }

  const raw: MemoryStoreRaw = {
    run: (namespace, runId) => clone(runs.get(key(namespace, runId))),
    history: (namespace, runId) => clone(history.get(key(namespace, runId)) ?? []),
    events: (namespace) => [...events.values()].filter((e) => e.namespace === namespace).map(clone),
    appRows: (table) => new Map(appTables.get(table) ?? []),
    runCount: () => runs.size,
    dump: () =>
      JSON.stringify({
        runs: [...runs.entries()].sort(),
        history: [...history.entries()].sort(),
        events: [...events.entries()].sort(),
        idempotency: [...idempotency.entries()].sort(),
        commands: [...commands.entries()].sort(),
        definitions: [...definitions.entries()].sort(),
        app: [...appTables.entries()].map(([t, rows]) => [t, [...rows.entries()].sort()]),
      }),
  };

  return {
    name: 'memory',
    capabilities,
    raw,
    async open() {},
    async close() {},

    registerDefinition: (definition) =>
      exclusive(() => {
        const k = `${definition.namespace}\u0000${definition.name}\u0000${definition.version}`;
        const existing = definitions.get(k);
        if (existing && existing.hash !== definition.hash) {
          throw definitionConflict(definition);
        }
        if (!existing) definitions.set(k, clone(definition));
      }),

    createRun: (request: CreateRunRequest) =>
      exclusive((): CreateRunResult => {
        const { run } = request;
        const idemKey =
          run.idempotencyKey === null ? null : `${run.namespace}\u0000${run.taskName}\u0000${run.idempotencyKey}`;
        if (idemKey !== null) {
          const existingId = idempotency.get(idemKey);
          const existing = existingId === undefined ? undefined : runs.get(key(run.namespace, existingId));
          if (existing) return { kind: 'existing', run: clone(existing) };
        }
        if (request.maxRuns !== null) {
          let live = 0;
          for (const r of runs.values()) if (r.namespace === run.namespace) live++;
          if (live >= request.maxRuns) return { kind: 'capacity' };
        }
        runs.set(key(run.namespace, run.runId), clone(run));
        history.set(key(run.namespace, run.runId), [clone(request.history)]);
        if (idemKey !== null) idempotency.set(idemKey, run.runId);
        return { kind: 'created', run: clone(run) };
      }),

    getRun: async (namespace, runId) => clone(runs.get(key(namespace, runId)) ?? null),
    getHistory: async (namespace, runId) => clone(history.get(key(namespace, runId)) ?? []),
    callbackCounts: async (namespace, runId): Promise<CallbackCounts> => {
      const own: { status: string; n: number }[] = [];
      for (const event of events.values()) {
        if (event.namespace === namespace && event.runId === runId) own.push({ status: event.status, n: 1 });
      }
      return countCallbacks(own);
    },

    transact: <T>(namespace: string, runId: string, plan: TransactPlan<T, MemoryTransaction>) =>
      exclusive(async () => {
        const staged = new Map<string, Map<string, Json>>();
        const tx: MemoryTransaction = {
          put(table, rowKey, value) {
            const rows = staged.get(table) ?? new Map<string, Json>();
            staged.set(table, rows);
            rows.set(rowKey, clone(value));
          },
          get(table, rowKey) {
            return clone(staged.get(table)?.get(rowKey) ?? appTables.get(table)?.get(rowKey));
          },
        };
        const current = runs.get(key(namespace, runId));
        let result = plan(tx, current ? clone(current) : null);
        if (isThenable(result)) {
          if (!capabilities.asyncTransactions) {
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
          applyWrite(result.write);
        }
        for (const [table, rows] of staged) {
          const target = appTables.get(table) ?? new Map<string, Json>();
          appTables.set(table, target);
          for (const [rowKey, value] of rows) target.set(rowKey, value);
        }
        return result.value;
      }),

    claimDue: (request) =>
      exclusive(() =>
        select(
          request,
          (run) =>
            CLAIMABLE_STATUSES.includes(run.status) &&
            run.dueAt !== null &&
            run.dueAt <= request.now &&
            taskMatches(run, request.tasks),
          (run) => run.dueAt ?? 0,
        ),
      ),

    recoverExpired: (request) =>
      exclusive(() =>
        select(
          request,
          (run) =>
            (run.status === 'running' || run.status === 'pausing') &&
            run.lease !== null &&
            run.lease.expiresAt <= request.now,
          (run) => run.lease?.expiresAt ?? 0,
        ),
      ),

    claimEvents: (request) =>
      exclusive(() => {
        const candidates = [...events.values()]
          .filter((event) => {
            if (event.namespace !== request.namespace) return false;
            const task = request.tasks.find((t) => t.name === event.taskName && t.version === event.taskVersion);
            if (!task?.kinds.includes(event.kind)) return false;
            const due = (event.status === 'pending' || event.status === 'retrying') && event.dueAt <= request.now;
            const abandoned =
              event.status === 'delivering' && event.lease !== null && event.lease.expiresAt <= request.now;
            return due || abandoned;
          })
          .sort((a, b) => a.dueAt - b.dueAt || (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
        const written = planEach(candidates, request.limit, request.plan, (event, next) => {
          checkEventWrite(event, next);
          events.set(key(event.namespace, event.eventId), clone(next));
          return clone(next);
        });
        return written;
      }),

    transactEvent: <T>(namespace: string, eventId: string, plan: EventPlan<T>) =>
      exclusive(() => {
        const current = events.get(key(namespace, eventId));
        const { write, value } = plan(current ? clone(current) : null);
        if (write !== null) {
          if (!current) throw new Error('internal: write for a missing event');
          checkEventWrite(current, write);
          events.set(key(namespace, eventId), clone(write));
        }
        return value;
      }),

    listEvents: async (request) =>
      [...events.values()]
        .filter((e) => e.namespace === request.namespace && e.status === request.status)
        .filter((e) => request.after === null || e.eventId > request.after)
        .sort((a, b) => (a.eventId < b.eventId ? -1 : 1))
        .slice(0, request.limit)
        .map(clone),

    listRuns: async (request) =>
      [...runs.values()]
        .filter((r) => r.namespace === request.namespace)
        .filter((r) => request.taskName === null || r.taskName === request.taskName)
        .filter((r) => request.status === null || r.status === request.status)
        .filter((r) => request.after === null || r.runId > request.after)
        .sort((a, b) => (a.runId < b.runId ? -1 : 1))
        .slice(0, request.limit)
        .map(clone),

    runCommand: <T extends Json>(namespace: string, command: CommandRequest, plan: CommandPlan<T>) =>
      exclusive(() => {
        const ck = key(namespace, command.commandId);
        const receipt = commands.get(ck);
        if (receipt) return { result: clone(receipt.result) as T, replayed: true, requestHash: receipt.requestHash };
        const run = command.runId === undefined ? undefined : runs.get(key(namespace, command.runId));
        const event = command.eventId === undefined ? undefined : events.get(key(namespace, command.eventId));
        const decided = decideCommand(plan, run ? clone(run) : null, event ? clone(event) : null);
        if (decided.run !== null) applyWrite(decided.run.write);
        if (decided.event !== null)
          events.set(key(namespace, decided.event.current.eventId), clone(decided.event.write));
        commands.set(ck, { requestHash: command.requestHash, result: clone(decided.result), createdAt: command.now });
        return { result: decided.result, replayed: false, requestHash: command.requestHash };
      }),

    collect: (request) =>
      exclusive(() => {
        const counts = { runs: 0, events: 0, deadLetters: 0 };
        const candidates = [...runs.entries()]
          .filter(
            ([, run]) => run.namespace === request.namespace && (request.after === null || run.runId > request.after),
          )
          .sort(([, a], [, b]) => (a.runId < b.runId ? -1 : 1))
          .slice(0, request.limit);
        for (const [k, run] of candidates) {
          if (!isExpiredRun(run.status, run.updatedAt, request.runsBefore)) continue;
          const own = [...events.values()].filter((e) => e.namespace === run.namespace && e.runId === run.runId);
          if (own.some((e) => UNSETTLED_EVENT_STATUSES.includes(e.status))) continue;
          runs.delete(k);
          history.delete(k);
          if (run.idempotencyKey !== null) {
            idempotency.delete(`${run.namespace}\u0000${run.taskName}\u0000${run.idempotencyKey}`);
          }
          for (const e of own) {
            if (e.status !== 'delivered') continue;
            events.delete(key(e.namespace, e.eventId));
            counts.events++;
          }
          counts.runs++;
        }
        for (const [k, event] of events) {
          if (event.namespace !== request.namespace) continue;
          if (event.status === 'delivered' && (event.deliveredAt ?? event.updatedAt) < request.runsBefore) {
            events.delete(k);
            counts.events++;
          } else if (event.status === 'dead_letter' && (event.deadAt ?? event.updatedAt) < request.deadLettersBefore) {
            events.delete(k);
            counts.deadLetters++;
          }
        }
        for (const [k, receipt] of commands) {
          if (k.startsWith(`${request.namespace}\u0000`) && receipt.createdAt < request.runsBefore) commands.delete(k);
        }
        const next = candidates.length === request.limit ? (candidates.at(-1)?.[1].runId ?? null) : null;
        return { ...counts, next };
      }),

    nextDueAt: async (namespace, tasks) => {
      let earliest: number | null = null;
      for (const run of runs.values()) {
        if (run.namespace !== namespace || isTerminal(run.status) || !taskMatches(run, tasks)) continue;
        if (!CLAIMABLE_STATUSES.includes(run.status) || run.dueAt === null) continue;
        if (earliest === null || run.dueAt < earliest) earliest = run.dueAt;
      }
      return earliest;
    },
  };
}

/**
 * Hands a copy of each candidate to core's `plan` until `limit` of them were written: `apply` writes a planned
 * candidate and answers what the store returns for it.
 */
function planEach<T, W, R>(
  candidates: readonly T[],
  limit: number,
  plan: (candidate: T) => W | null,
  apply: (candidate: T, write: W) => R,
): R[] {
  const written: R[] = [];
  for (const candidate of candidates) {
    if (written.length >= limit) break;
    const write = plan(clone(candidate));
    if (write !== null) written.push(apply(candidate, write));
  }
  return written;
}
