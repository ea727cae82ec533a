import type { HistoryEntry, RunError, RunInfo, RunStatus } from '../../machine/run-types.js';
import { type Collected, collectExpired } from '../loops/retention.js';
import type { Engine } from '../queue/engine.js';
import { type ChangesOptions, type ChangesPage, changeOf, feedRequest, readFeed } from './changes.js';
import { operatorDeadLetters } from './dead-letters.js';
import type { OperatorScope } from './input.js';
import { operatorRuns } from './runs.js';
import { type OperatorSchedules, operatorSchedules } from './schedules.js';
import { operatorSettled, type SettledPerMinute } from './settled.js';
import { operatorStats, type Stats } from './stats.js';
import { type OperatorTasks, operatorTasks } from './tasks.js';

/** A run as `runs.list` shows it: its `RunInfo`, with `query` and `state` only when the listing asked for them. */
export type RunListItem = Omit<RunInfo, 'query' | 'state'> & Partial<Pick<RunInfo, 'query' | 'state'>>;

/** What `runs.pause|resume|cancel` answer. */
export type OperatorResult =
  | { kind: 'not_found'; runId: string }
  | { kind: 'applied' | 'noop'; runId: string; revision: number; status: RunStatus; changed: boolean };

/** What `deadLetters.replay` answers. */
export type ReplayResult =
  | { kind: 'not_found'; eventId: string }
  | { kind: 'applied' | 'noop'; eventId: string; revision: number; status: string; changed: boolean };

/** One dead letter as `deadLetters.list` shows it. */
export interface DeadLetter {
  eventId: string;
  runId: string;
  kind: string;
  revision: number;
  deliveryAttempt: number;
  error: RunError | null;
  deadAt: string;
}

/** What `health()` answers. */
export interface Health {
  status: 'ready' | 'degraded' | 'unavailable';
  reasons: string[];
}

/** The operator API: list and steer runs, replay dead letters, collect, check health. */
export interface Operator {
  runs: {
    /**
     * Runs newest first, optionally of one task and status, `limit` (default 50, at most 200) at a time; items carry
     * `query` and `state` only with `payloads: true`.
     */
    list(options?: {
      taskName?: string;
      status?: RunStatus;
      /** Only runs started in this flow-control group. */
      group?: string;
      /** Only the children of this run (`ctx.next(state, { children })`). */
      parentRunId?: string;
      /** Only the run started with this key (needs `taskName`: keys are per task). */
      idempotencyKey?: string;
      /** Only the runs this schedule made: its slots' and its "run now" runs (needs `taskName`, the schedule's task). */
      scheduleId?: string;
      /** Only runs created at or after this time (ISO-8601). */
      createdFrom?: string;
      /** Only runs created before this time (ISO-8601). */
      createdTo?: string;
      limit?: number;
      cursor?: string;
      payloads?: boolean;
    }): Promise<{ items: RunListItem[]; nextCursor: string | null }>;
    /** Reads any run of the namespace, whatever its task (`null` when there is none). */
    get(runId: string): Promise<RunInfo | null>;
    /** Any run's history in `seq` order (`[]` when there is none). */
    history(runId: string): Promise<HistoryEntry[]>;
    /** Pauses a run that has not finished: `pausing` while a page holds a live lease, else `paused`. */
    pause(command: RunCommand): Promise<OperatorResult>;
    /** Lets a `paused`, `pausing` or `blocked` run go on (`running`, `retrying` or `pending`). */
    resume(command: RunCommand): Promise<OperatorResult>;
    /** Cancels a run that has not finished, with `OPERATOR_STOP` and the operator's text as detail. */
    cancel(command: RunCommand): Promise<OperatorResult>;
    /**
     * Sends a `failed` run back to `pending` with `OPERATOR_RETRY`: its page and state kept, its attempts counted
     * anew. Any other status: `noop`.
     */
    retry(command: RunCommand): Promise<OperatorResult>;
  };
  deadLetters: {
    /** Dead letters newest first, `limit` (default 50, at most 200) at a time. */
    list(options?: { limit?: number; cursor?: string }): Promise<{ items: DeadLetter[]; nextCursor: string | null }>;
    /** Sends a dead letter back to the callback loop with fresh attempts. */
    replay(command: {
      eventId: string;
      expectedRevision: number;
      reason: string;
      commandId: string;
    }): Promise<ReplayResult>;
  };
  /** Persisted schedules: list, pause, resume. */
  schedules: OperatorSchedules;
  /** Tasks: their flow limits and run counts; pause and resume a task for the whole fleet. */
  tasks: OperatorTasks;
  maintenance: {
    /** Applies retention now and says how many rows it removed. */
    collect(): Promise<{ runs: number; events: number; deadLetters: number }>;
  };
  /** Says whether the queue and its store are `ready`, `degraded` or `unavailable`, and why. */
  health(): Promise<Health>;
  /**
   * Counts runs by status and by task (every status a key), dead letters, and the age of the oldest due run, from
   * counters and indexes: as cheap with millions of finished runs as with none.
   */
  stats(options?: { taskName?: string }): Promise<Stats>;
  /**
   * Runs settled (moved into `success`, `failed` or `cancelled`) in each minute of the last `minutes` (default 60, at
   * most 1,440), from per-minute counters the store keeps with each write.
   */
  settled(options?: { minutes?: number }): Promise<SettledPerMinute>;
  /**
   * The changes feed: every history entry of the namespace in commit order, `limit` (1..1000, default 100) at a time
   * after the cursor `after` (none: from the oldest entry kept); `next` is always a cursor to ask again with.
   * `CURSOR_EXPIRED` when retention removed entries after `after`.
   */
  changes(options?: ChangesOptions): Promise<ChangesPage>;
}

/** An operator command on one run. */
export interface RunCommand {
  runId: string;
  expectedRevision: number;
  reason: string;
  commandId: string;
}

/** Builds the operator API of one queue. */
export function createOperator(
  engine: Engine,
  assertUsable: (operation: string) => void,
  probes: () => string[],
): Operator {
  const scope: OperatorScope = { engine, assertUsable, probes };
  return {
    runs: operatorRuns(scope),
    deadLetters: operatorDeadLetters(scope),
    schedules: operatorSchedules(scope),
    tasks: operatorTasks(scope),
    maintenance: { collect: () => collect(scope) },
    health: () => health(scope),
    stats: (options) => operatorStats(scope, options),
    settled: (options) => operatorSettled(scope, options),
    changes: (options) => changes(scope, options),
  };
}

/** `operator.changes`: one slice of the feed, with the cursor to continue it. */
async function changes(scope: OperatorScope, options: unknown): Promise<ChangesPage> {
  const operation = 'operator.changes';
  scope.assertUsable(operation);
  const slice = await readFeed(scope.engine, feedRequest(scope.engine, options, operation), operation);
  return { items: slice.changes.map(changeOf), next: slice.next };
}

/** `maintenance.collect`: applies retention now (see `collectExpired`). */
function collect(scope: OperatorScope): Promise<Collected> {
  scope.assertUsable('operator.maintenance.collect');
  return collectExpired(scope.engine);
}

/** `health()`: `unavailable` when the queue cannot be used or the store does not answer, `degraded` with reasons. */
async function health(scope: OperatorScope): Promise<Health> {
  const reasons = [...scope.probes(), ...(scope.engine.store.healthReasons?.() ?? []).map((r) => `store: ${r}`)];
  try {
    scope.assertUsable('operator.health');
  } catch (error) {
    return { status: 'unavailable', reasons: [...reasons, (error as Error).message] };
  }
  try {
    await scope.engine.store.getRun(scope.engine.namespace, '0'.repeat(32));
  } catch (error) {
    return { status: 'unavailable', reasons: [...reasons, `store: ${(error as Error).message}`] };
  }
  return reasons.length > 0 ? { status: 'degraded', reasons } : { status: 'ready', reasons: [] };
}
