import type { Json } from './json.js';
import type { CallbackCounts, CallbackEventRecord, HistoryEntry, RunRecord, RunStatus } from './types.js';

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

  /** Registers a task definition; the same namespace, name and version with another hash: `DEFINITION_HASH_CONFLICT`. */
  registerDefinition(definition: DefinitionRecord): Promise<void>;

  /**
   * Inserts a new run with its first history entry, unless its idempotency key already names a run (then that run
   * is returned) or the namespace holds `maxRuns` live runs. Atomic: two concurrent calls with one key create one run.
   */
  createRun(request: CreateRunRequest): Promise<CreateRunResult>;

  /** Reads one run, or `null`. */
  getRun(namespace: string, runId: string): Promise<RunRecord | null>;
  /** Reads a run's history in `seq` order (`[]` for a missing run). */
  getHistory(namespace: string, runId: string): Promise<HistoryEntry[]>;
  /** Counts a run's callback events by what `RunInfo.callbacks` shows. */
  callbackCounts(namespace: string, runId: string): Promise<CallbackCounts>;

  /**
   * Runs `plan` inside one transaction with the run's current row and writes what it returns. If `plan` throws, the
   * transaction (including whatever the plan wrote through `tx`) rolls back and the error is rethrown. The store
   * checks `write.run.revision === current.revision + write.history.length` before writing.
   * With `capabilities.asyncTransactions === false`, `plan` must return synchronously.
   */
  transact<T>(namespace: string, runId: string, plan: TransactPlan<T, Tx>): Promise<T>;

  /**
   * Claims due runs: at most `limit` runs of the given tasks whose status is `pending`, `retrying` or `waiting` with
   * `dueAt <= now`, oldest `dueAt` first, each passed to `plan` and written in one transaction. Returns the written
   * runs. The selection must be index-backed so its cost does not grow with the number of waiting or finished runs.
   */
  claimDue(request: SelectRequest): Promise<RunRecord[]>;

  /** Like `claimDue` for `running`/`pausing` runs whose lease expired at `now`: the recovery sweep. */
  recoverExpired(request: Omit<SelectRequest, 'tasks'>): Promise<RunRecord[]>;

  /** The earliest `dueAt` among claimable runs of the given tasks (to sleep until then), or `null`. */
  nextDueAt(namespace: string, tasks: readonly TaskKey[]): Promise<number | null>;

  /**
   * Optional: calls `listener` soon after another connection or process commits a change, so idle workers wake
   * without waiting a whole poll (SQLite: `PRAGMA data_version`; PostgreSQL: LISTEN/NOTIFY). Returns an unsubscribe
   * function. Workers keep polling at `pollMs` as the fallback.
   */
  subscribe?(listener: () => void): () => void;
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
}

/** What `createRun` inserts. */
export interface CreateRunRequest {
  run: RunRecord;
  history: HistoryEntry;
  /** `null`: unlimited. Otherwise live (not yet collected) runs in the namespace must stay below it. */
  maxRuns: number | null;
}

/** What `createRun` did. */
export type CreateRunResult =
  | { kind: 'created'; run: RunRecord }
  | { kind: 'existing'; run: RunRecord }
  | { kind: 'capacity' };

/** One conditional write: the run's next version, the history entries that lead to it, and new callback events. */
export interface RunWrite {
  run: RunRecord;
  /** Zero entries keeps the revision (lease renewals, budget reservations); n entries raise it by n. */
  history: HistoryEntry[];
  events: CallbackEventRecord[];
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
}

/** Statuses `claimDue` selects. */
export const CLAIMABLE_STATUSES: readonly RunStatus[] = ['pending', 'retrying', 'waiting'];

/** Checks a write against the current row: the one comparison every store makes before it writes. */
export function checkWrite(current: RunRecord, write: RunWrite): void {
  if (write.run.runId !== current.runId) throw new Error('internal: write for another run');
  if (write.run.revision !== current.revision + write.history.length) {
    throw new Error(
      `internal: revision ${write.run.revision} does not follow ${current.revision} + ${write.history.length}`,
    );
  }
  write.history.forEach((entry, index) => {
    if (entry.seq !== current.revision + index + 1) throw new Error('internal: history seq out of order');
  });
}
