import type { PlainClaim } from '../machine/claim-policy.js';
import type { TaskFlow } from '../machine/flow.js';
import type {
  CallbackCounts,
  CallbackEventRecord,
  CallbackEventStatus,
  CallbackKind,
  HistoryEntry,
  RunRecord,
} from '../machine/run-types.js';
import type { RunWrite } from '../machine/run-write.js';
import type { ScheduleRecord } from '../machine/schedule-types.js';
import type { Json } from '../util/json.js';
import type { ChangesAnswer, ChangesRequest, TrimChangesRequest } from './changes.js';
import type {
  ChildRecord,
  CollectRequest,
  CollectResult,
  ListCallbackEventsRequest,
  ListChildrenRequest,
  ListedRun,
  ListRunsRequest,
  ListSchedulesRequest,
  RunStatsAnswer,
  RunStatsRequest,
  SettledMinute,
  SettledRequest,
} from './read-requests.js';
import type { DueSchedulesRequest, SchedulePlan } from './schedule-requests.js';
import type { StartsPlan } from './start-plan.js';

export type { DueSchedulesRequest, SchedulePlan, ScheduleWrite, StoredReceipt } from './schedule-requests.js';
export type {
  ChildRecord,
  CollectRequest,
  CollectResult,
  ListCallbackEventsRequest,
  ListChildrenRequest,
  ListedRun,
  ListRunsRequest,
  ListSchedulesRequest,
  PlainClaim,
  RunStatsAnswer,
  RunStatsRequest,
  RunWrite,
  SettledMinute,
  SettledRequest,
};

/**
 * The contract every storage adapter implements. Core decides every transition with its pure state machine; a
 * store reads the current row inside a transaction, hands it to core's plan, and writes what the plan returns
 * (the run, its history entries, its callback events) atomically, or nothing at all.
 */
export interface Store<Tx = unknown> {
  /** A short name for messages, such as `memory` or `sqlite`. */
  readonly name: string;
  /** What this store can do; core adapts to it. */
  readonly capabilities: StoreCapabilities;

  /** Opens the store and applies its migrations; reference-counted, so every `open` needs one `close`. */
  open(): Promise<void>;
  /** Releases one `open`; the last one closes connections the store owns. */
  close(): Promise<void>;

  /**
   * Registers a task definition; the same namespace, name and version with another hash: `DEFINITION_HASH_CONFLICT`.
   * Its `flow` becomes the task's limits for the whole fleet (the most recent registration wins) in the same
   * transaction; a task's first registration makes its `TaskRecord` (not paused, revision 0).
   */
  registerDefinition(definition: DefinitionRecord): Promise<void>;

  /** The namespace's tasks (every name a definition was registered under), by name, each with its versions. */
  listTasks(namespace: string): Promise<TaskRecord[]>;

  /**
   * One registered definition's hash and canonical form, or `null`: how an operator starts a run of a task its own
   * process did not declare (a schedule's "run now").
   */
  getDefinition(
    namespace: string,
    name: string,
    version: string,
  ): Promise<Pick<DefinitionRecord, 'hash' | 'definition'> | null>;

  /**
   * Inserts a new run with its first history entry, unless its idempotency key already names a run (then that run
   * is returned) or the namespace holds `maxRuns` live runs. Atomic: two concurrent calls with one key create one run.
   */
  createRun(request: CreateRunRequest): Promise<CreateRunResult>;

  /**
   * Creates many runs of one task in one transaction, all or none: the runs their keys already name are read, core's
   * `planStarts` decides, and only an `ok` plan's new runs are written (`capacity` when they would pass `maxRuns`).
   */
  createRuns(request: CreateRunsRequest): Promise<CreateRunsResult>;

  /**
   * Runs `plan` in one transaction with the schedule's current row (locked) and, when `commandId` is given, the
   * receipt stored under it; writes what the plan returns (the schedule, its slots' runs, a receipt) and answers
   * its value. A run whose idempotency key is taken is skipped.
   */
  transactSchedule<T>(namespace: string, id: string, plan: SchedulePlan<T>, commandId?: string): Promise<T>;

  /** Enabled schedules of the given tasks whose `nextAt` is at or before `now`, earliest first. */
  dueSchedules(request: DueSchedulesRequest): Promise<ScheduleRecord[]>;

  /** Schedules of a namespace in id order, after the `after` id. */
  listSchedules(request: ListSchedulesRequest): Promise<ScheduleRecord[]>;

  /** Reads one run, or `null`. */
  getRun(namespace: string, runId: string): Promise<RunRecord | null>;
  /** Reads a run's history in `seq` order (`[]` for a missing run). */
  getHistory(namespace: string, runId: string): Promise<HistoryEntry[]>;
  /** Counts a run's callback events by what `RunInfo.callbacks` shows. */
  callbackCounts(namespace: string, runId: string): Promise<CallbackCounts>;
  /** `callbackCounts` of many runs in one read, in the order of `runIds` (a listing's slice). */
  callbackCountsOf(namespace: string, runIds: readonly string[]): Promise<CallbackCounts[]>;

  /**
   * Counts a namespace's runs by task and status, its dead letters, and the earliest due time among claimable runs
   * due at or before `now`: from counters and indexes, so the cost does not grow with the number of finished runs.
   */
  runStats(request: RunStatsRequest): Promise<RunStatsAnswer>;
  /**
   * How many runs of a namespace settled (moved into `success`, `failed` or `cancelled`) in each minute from `since`
   * on, only minutes with any: from per-minute counters kept with each write, not from the runs themselves.
   */
  settledPerMinute(request: SettledRequest): Promise<SettledMinute[]>;

  /**
   * Runs `plan` inside one transaction with the run's current row and writes what it returns, and what it leads to
   * in other runs (`touchesFamily`: walked with `followFamily` in the same transaction). If `plan` throws, the
   * transaction (including whatever the plan wrote through `tx`) rolls back and the error is rethrown. The store
   * checks `write.run.revision === current.revision + write.history.length` before writing.
   * With `capabilities.asyncTransactions === false`, `plan` must return synchronously.
   * `options.pure` promises that `plan` ignores `tx` and has no side effects, so a store may apply it in one
   * transaction together with other pure plans (batched commit); each plan still sees the row as the plans before it
   * left it, and a plan that throws rejects only its own call.
   */
  transact<T>(namespace: string, runId: string, plan: TransactPlan<T, Tx>, options?: TransactOptions): Promise<T>;

  /**
   * Claims due runs: at most `limit` runs of the given tasks that are claimable at `now`, in the claim order, both as
   * `CLAIMABLE` in `machine/claimable.ts` defines them, each passed to `plan` and written in one transaction. Returns the written
   * runs. The selection must be index-backed so its cost does not grow with the number of waiting or finished runs.
   * A store may also pass `plan` a row it was told about without locking it and write the plan only if the row is
   * unchanged, or apply `request.plainClaim` itself to the rows that qualify (see `PlainClaim`): the returned runs,
   * never the plans, say what was claimed. A store may keep a plain claim's transaction open (the rows locked) until
   * the end of the current turn of the event loop, and write the pure plans sent for the claimed runs in that turn
   * together with the claims; until it commits, other connections see the runs as they were.
   */
  claimDue(request: SelectRequest): Promise<RunRecord[]>;

  /** Like `claimDue` for runs whose lease expired at `now` (`isRecoverableAt`): the recovery sweep. */
  recoverExpired(request: Omit<SelectRequest, 'tasks'>): Promise<RunRecord[]>;

  /** The earliest `dueAt` among claimable runs of the given tasks (to sleep until then), or `null`. */
  nextDueAt(namespace: string, tasks: readonly TaskKey[]): Promise<number | null>;

  /**
   * Claims callback events for delivery: at most `limit` events of the given tasks and kinds that are `pending` or
   * `retrying` with `dueAt <= now`, or `delivering` with an expired lease, oldest first, each passed to `plan` and
   * written (event revision + 1) in one transaction. Returns the written events. A run's events are delivered one at
   * a time in `sequence` order: an event is a candidate only when no event of its run with a lower sequence is
   * unsettled (`UNSETTLED_EVENT_STATUSES`).
   */
  claimCallbackEvents(request: CallbackEventSelectRequest): Promise<CallbackEventRecord[]>;

  /** Like `transact`, for one callback event: the plan's event write must have `revision = current.revision + 1`. */
  transactCallbackEvent<T>(namespace: string, eventId: string, plan: EventPlan<T>): Promise<T>;

  /** Lists callback events in one status newest first (by `eventId`, which starts with its run id), below `before`. */
  listCallbackEvents(request: ListCallbackEventsRequest): Promise<CallbackEventRecord[]>;

  /**
   * Lists runs newest first (by `runId`, which starts with the creation time), optionally by task name, status, group
   * or parent, below the `before` id: each as a `ListedRun` (a whole `RunRecord` will do).
   */
  listRuns(request: ListRunsRequest): Promise<ListedRun[]>;

  /**
   * The children one page of a parent started, in the order the page gave them (their ids, made by one process in
   * that order, ascend): what the parent's next page sees as `ctx.children`. Collected children are missing. A store
   * may answer whole records; only the fields of `ChildRecord` are read.
   */
  listChildren(request: ListChildrenRequest): Promise<ChildRecord[]>;

  /**
   * Runs an operator command once per `commandId`: inside one transaction, a stored receipt is returned as it is
   * (`replayed: true`); otherwise `plan` decides the writes and its result is stored as the receipt with them.
   */
  runCommand<T extends Json>(
    namespace: string,
    command: CommandRequest,
    plan: CommandPlan<T>,
  ): Promise<{ result: T; replayed: boolean; requestHash: string }>;

  /**
   * Deletes what retention allows: terminal runs last changed before `runsBefore` whose callback events are all
   * settled (`delivered` or `dead_letter`), with their history, idempotency key and delivered events; delivered events
   * before `runsBefore`; dead letters before `deadLettersBefore`; command receipts before `runsBefore`.
   */
  collect(request: CollectRequest): Promise<CollectResult>;

  /**
   * The changes feed: history entries of the namespace after `after`, in commit order (a position every entry gets
   * in its own commit, ascending across commits), read by an index range whatever the feed's size.
   */
  readChanges(request: ChangesRequest): Promise<ChangesAnswer>;

  /** The highest feed position the namespace's entries have (its floor when it has none): a watch from now starts there. */
  changesHead(namespace: string): Promise<number>;

  /**
   * Feed retention: removes up to `limit` of the oldest entries written before `before` (in position order, stopping
   * at the first newer one), raises the namespace's floor to the highest position removed, and says how many it removed.
   */
  trimChanges(request: TrimChangesRequest): Promise<number>;

  /**
   * Optional: calls `listener` soon after another connection or process commits a change, so idle workers wake
   * without waiting a whole poll (SQLite: `PRAGMA data_version`; PostgreSQL: LISTEN/NOTIFY). Returns an unsubscribe
   * function. Workers keep polling at `pollMs` as the fallback. `log` is the queue's logger: a store logs there what
   * happens to its signal (a lost listening connection at `warn`, its return at `info`).
   */
  subscribe?(listener: () => void, log?: StoreLog): () => void;

  /**
   * Optional: what the store knows is wrong while it still answers (a lost LISTEN connection being reconnected, for
   * example). `health()` reports the queue `degraded` with these reasons.
   */
  healthReasons?(): string[];
}

/** The logger a queue gives its store (`Logger`'s `info` and `warn`). */
export interface StoreLog {
  /** Something came back as it should (a listening connection). */
  info(fields: object, message: string): void;
  /** Something the store works around (a lost listening connection, polled meanwhile). */
  warn(fields: object, message: string): void;
}

/** What a store can do, as data. */
export interface StoreCapabilities {
  /** Whether `transact` plans may be async; `false` (SQLite) means `check` at commit and `effect` must be synchronous. */
  asyncTransactions: boolean;
  /** Whether several processes can share this store (a file or a server), not only one process's memory. */
  multiProcess: boolean;
}

/** A task identity: name and version. */
export interface TaskKey {
  name: string;
  version: string;
}

/** A registered definition as stored. */
export interface DefinitionRecord {
  namespace: string;
  name: string;
  version: string;
  hash: string;
  /** The canonical definition the hash covers. */
  definition: Json;
  /** The task's flow limits (not part of the hash), or `null`. */
  flow: TaskFlow | null;
}

/**
 * A task as the store keeps it for flow control, one per name and namespace: its limits, whether an operator paused
 * it (`revision` rises with every applied pause or resume), and the holds `RetryAfterError` put on it.
 */
export interface TaskRecord {
  namespace: string;
  name: string;
  /** Every version registered under the name, in registration order. */
  versions: string[];
  flow: TaskFlow | null;
  paused: boolean;
  revision: number;
  /** No run of the task is claimed before this time (`hold: 'task'`), or `null`. */
  holdUntil: number | null;
  /** The latest hold put on one of its groups (`hold: 'group'`), or `null`. */
  groupHoldUntil: number | null;
  updatedAt: number;
}

/** What `createRun` inserts. */
export interface CreateRunRequest {
  run: RunRecord;
  history: HistoryEntry;
  /** `null`: unlimited. Otherwise live (not yet collected) runs in the namespace must stay below it. */
  maxRuns: number | null;
}

/** What `createRuns` inserts: runs of one task, in input order. */
export interface CreateRunsRequest {
  runs: readonly Pick<CreateRunRequest, 'run' | 'history'>[];
  /** As in `CreateRunRequest`, for the namespace after every new run of the call. */
  maxRuns: number | null;
  /**
   * The application's own open transaction to write the runs in (`start(input, { tx })`): the runs exist only if
   * it commits. A store that cannot use it refuses it with `CONFIG_INVALID`.
   */
  tx?: unknown;
}

/** What `createRuns` did: core's plan (nothing written unless `ok`), or `capacity` with nothing written. */
export type CreateRunsResult = StartsPlan | { kind: 'capacity' };

/** What `createRun` did. */
export type CreateRunResult =
  | { kind: 'created'; run: RunRecord }
  | { kind: 'existing'; run: RunRecord }
  | { kind: 'capacity' };

/** Hints a caller gives `transact`. */
export interface TransactOptions {
  /** The plan neither uses `tx` nor has side effects: the store may batch it with other pure plans. */
  pure?: boolean;
}

/** What a transaction plan returns: the write to apply (or `null`) and a value handed back to the caller. */
export interface PlanResult<T> {
  write: RunWrite | null;
  value: T;
}

/** Core's decision inside a store transaction. `tx` is the store's transaction handle, given to effects and checks. */
export type TransactPlan<T, Tx = unknown> = (
  tx: Tx,
  current: RunRecord | null,
) => PlanResult<T> | Promise<PlanResult<T>>;

/** A selection of runs to claim or recover, with core's pure plan for each selected run. */
export interface SelectRequest {
  namespace: string;
  tasks: readonly TaskKey[];
  limit: number;
  now: number;
  /** Decides the write for one selected run, or `null` to leave it. Synchronous and pure. */
  plan: (run: RunRecord) => RunWrite | null;
  /**
   * Optional, for `claimDue`: the write `plan` makes for every selected run that `qualifiesForPlainClaim`, described
   * as data, so that a store can apply it to such rows itself, in the statement that selects them (see `PlainClaim`).
   */
  plainClaim?: PlainClaim;
  /**
   * Optional, for `claimDue`: called when flow control (a limit, a hold, a paused task) left due runs unclaimed, with
   * when a claim may succeed again (`null`: once a lease is given back), so that the worker sleeps until then.
   */
  heldBack?: (until: number | null) => void;
}

/** A selection of callback events to claim, with core's pure plan for each. */
export interface CallbackEventSelectRequest {
  namespace: string;
  /** Task identities and, for each, the kinds this process has handlers for. */
  tasks: readonly (TaskKey & { kinds: readonly CallbackKind[] })[];
  limit: number;
  now: number;
  /** Core's decision for each candidate: the claimed event to write, or `null` to leave it. */
  plan: (event: CallbackEventRecord) => CallbackEventRecord | null;
}

/** Core's decision about one callback event inside a store transaction. */
export type EventPlan<T> = (current: CallbackEventRecord | null) => { write: CallbackEventRecord | null; value: T };

/** An operator command's identity: its id, the hash of its request, and the run or event it targets. */
export interface CommandRequest {
  commandId: string;
  requestHash: string;
  /** When the command is run (the queue's clock): its receipt's time, for retention. */
  now: number;
  runId?: string;
  eventId?: string;
  /** The task (by name) a task command targets. */
  taskName?: string;
}

/**
 * Core's decision for an operator command, given the current run, event or task it targets. A task write must have
 * `revision = current.revision + 1`; it changes `paused` only.
 */
export type CommandPlan<T> = (current: {
  run: RunRecord | null;
  event: CallbackEventRecord | null;
  task: TaskRecord | null;
}) => {
  run: RunWrite | null;
  event: CallbackEventRecord | null;
  task?: TaskRecord | null;
  result: T;
};

/** Statuses in which a callback event still waits for delivery (its run cannot be collected). */
export const UNSETTLED_EVENT_STATUSES: readonly CallbackEventStatus[] = ['pending', 'retrying', 'delivering'];
