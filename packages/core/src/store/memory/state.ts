import { childKeyTaken, countChildren, followFamilySync, touchesFamily } from '../../machine/family.js';
import { DEFAULT_GROUP } from '../../machine/flow.js';
import { type CallbackEventRecord, type HistoryEntry, isTerminal, type RunRecord } from '../../machine/run-types.js';
import type { NewChildRun } from '../../machine/run-write.js';
import type { ScheduleRecord } from '../../machine/schedule-types.js';
import type { Json } from '../../util/json.js';
import type { StoredChange } from '../changes.js';
import type { DefinitionRecord, RunWrite, StoreCapabilities, TaskRecord } from '../contract.js';
import { heldTask } from '../flow.js';

/** The key of a run or event in its namespace. */
export const key = (namespace: string, id: string) => `${namespace}\u0000${id}`;

/** The key of a task's group. */
export const groupKey = (namespace: string, task: string, group: string | null) =>
  `${namespace}\u0000${task}\u0000${group ?? DEFAULT_GROUP}`;

/** A deep copy: nothing the store holds is shared with a caller. */
export const clone = <T>(value: T): T => structuredClone(value);

/** What one memory store holds, and the one lock its writes take turns on. */
export class MemoryState {
  readonly runs = new Map<string, RunRecord>();
  readonly history = new Map<string, HistoryEntry[]>();
  readonly events = new Map<string, CallbackEventRecord>();
  /** `namespace, task name, key` to run id. */
  readonly idempotency = new Map<string, string>();
  readonly definitions = new Map<string, DefinitionRecord>();
  /** The application's own rows, written by effects through `MemoryTransaction`. */
  readonly appTables = new Map<string, Map<string, Json>>();
  readonly commands = new Map<string, { requestHash: string; result: Json; createdAt: number }>();
  readonly schedules = new Map<string, ScheduleRecord>();
  /** Flow control: tasks by `namespace, name`; groups by `namespace, task, group`; claim times by scope key. */
  readonly tasks = new Map<string, TaskRecord>();
  readonly groups = new Map<string, { lastClaimedAt: number | null; holdUntil: number | null }>();
  readonly flowClaims = new Map<string, number[]>();
  /** The changes feed: every history entry in the order it was stored, with its position. */
  readonly feed: { namespace: string; change: StoredChange }[] = [];
  /** Per namespace, the highest feed position retention removed. */
  readonly feedFloors = new Map<string, number>();
  private feedHead = 0;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(readonly capabilities: StoreCapabilities) {}

  /** Serialises transactions so an async plan cannot interleave with another write. */
  exclusive<T>(fn: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(fn, fn);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /**
   * Stores a checked run write: the run, its history entries, and callback events not stored yet; then what it leads
   * to in other runs (`followFamilySync`: children inserted, a parent counted, children cancelled). A child key that is
   * taken throws before anything is stored.
   */
  applyWrite(write: RunWrite): void {
    const before = this.runs.get(key(write.run.namespace, write.run.runId));
    if (write.children !== undefined) this.assertKeysFree(write.children);
    this.applyOne(write);
    if (before === undefined || !touchesFamily(before, write)) return;
    followFamilySync([{ current: clone(before), write }], {
      count: (namespace, parentRunId, by, now) => {
        const parent = this.runs.get(key(namespace, parentRunId));
        const counted = parent === undefined ? null : countChildren(parent, by, now);
        if (counted === null) return null;
        this.runs.set(key(namespace, parentRunId), counted);
        return { status: counted.status, children: clone(counted.children as NonNullable<RunRecord['children']>) };
      },
      read: (namespace, runId) => {
        const run = this.runs.get(key(namespace, runId));
        return run === undefined ? null : clone(run);
      },
      unsettled: (namespace, parentRunId) =>
        [...this.runs.values()]
          .filter((r) => r.namespace === namespace && r.parent?.runId === parentRunId && !isTerminal(r.status))
          .sort((a, b) => (a.runId < b.runId ? -1 : 1))
          .map(clone),
      write: (_current, next) => this.applyOne(next),
      insert: (children) => this.insertChildren(children),
    });
  }

  /** Inserts children a write created, with their first history entries and idempotency keys. */
  private insertChildren(children: readonly NewChildRun[]): void {
    for (const { run, history } of children) {
      this.runs.set(key(run.namespace, run.runId), clone(run));
      this.addHistory(run, [history]);
      const idemKey = this.idempotencyKeyOf(run);
      if (idemKey !== null) this.idempotency.set(idemKey, run.runId);
    }
  }

  /** Throws `IDEMPOTENCY_CONFLICT` when a child's idempotency key already names a run. */
  private assertKeysFree(children: readonly NewChildRun[]): void {
    for (const { run } of children) {
      const idemKey = this.idempotencyKeyOf(run);
      if (idemKey !== null && this.idempotency.has(idemKey)) throw childKeyTaken(run);
    }
  }

  /** Appends history entries to a run's history and to the changes feed. */
  addHistory(run: RunRecord, entries: readonly HistoryEntry[]): void {
    const k = key(run.namespace, run.runId);
    const list = this.history.get(k) ?? [];
    for (const entry of entries) {
      list.push(clone(entry));
      const change = { position: ++this.feedHead, runId: run.runId, taskName: run.taskName, entry: clone(entry) };
      this.feed.push({ namespace: run.namespace, change: { ...change, taskVersion: run.taskVersion } });
    }
    this.history.set(k, list);
  }

  /** Stores one checked run write, nothing else. */
  private applyOne(write: RunWrite): void {
    this.runs.set(key(write.run.namespace, write.run.runId), clone(write.run));
    this.addHistory(write.run, write.history);
    for (const event of write.events) {
      const ek = key(event.namespace, event.eventId);
      if (!this.events.has(ek)) this.events.set(ek, clone(event));
    }
    if (write.hold !== undefined) this.applyHold(write.run, write.hold);
  }

  /** Stores a `RetryAfterError` hold on the run's task or group. */
  private applyHold(run: RunRecord, hold: NonNullable<RunWrite['hold']>): void {
    const task = this.tasks.get(key(run.namespace, run.taskName));
    if (task === undefined) return;
    this.tasks.set(key(run.namespace, run.taskName), { ...task, ...heldTask(task, hold) });
    if (hold.scope !== 'group') return;
    const gk = groupKey(run.namespace, run.taskName, hold.group);
    const group = this.groups.get(gk) ?? { lastClaimedAt: null, holdUntil: null };
    this.groups.set(gk, { ...group, holdUntil: Math.max(group.holdUntil ?? 0, hold.until) });
  }

  /** The idempotency index key of a run with a key. */
  idempotencyKeyOf(run: RunRecord): string | null {
    return run.idempotencyKey === null ? null : `${run.namespace}\u0000${run.taskName}\u0000${run.idempotencyKey}`;
  }

  /** Everything the store holds as one canonical string, to prove an operation changed nothing. */
  dump(): string {
    return JSON.stringify({
      runs: [...this.runs.entries()].sort(),
      history: [...this.history.entries()].sort(),
      feed: this.feed,
      events: [...this.events.entries()].sort(),
      idempotency: [...this.idempotency.entries()].sort(),
      commands: [...this.commands.entries()].sort(),
      definitions: [...this.definitions.entries()].sort(),
      schedules: [...this.schedules.entries()].sort(),
      tasks: [...this.tasks.entries()].sort(),
      app: [...this.appTables.entries()].map(([t, rows]) => [t, [...rows.entries()].sort()]),
    });
  }
}

/**
 * Hands a copy of each candidate to core's `plan` until `limit` of them were written: `apply` writes a planned
 * candidate and answers what the store returns for it.
 */
export function planEach<T, W, R>(
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
