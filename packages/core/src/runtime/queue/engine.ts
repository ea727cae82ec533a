import { summarizeError } from '../../machine/run-error.js';
import { isTerminal, type RunError } from '../../machine/run-types.js';
import type { RunWrite, Store } from '../../store/contract.js';
import type { Json } from '../../util/json.js';
import { KeyTable } from '../../util/key-table.js';
import { errorFields, type Logger, logError, logStoredError } from '../observe/logger.js';
import { emitTelemetry, type TelemetryEvent } from '../observe/telemetry.js';
import { Tracing } from '../observe/tracing.js';
import type { ResolvedDefinition } from '../task/definition.js';
import type { TaskHandlers } from '../task/handlers.js';
import { FeedSignal } from './feed-signal.js';
import type { ResolvedQueueOptions } from './options.js';
import { Waker } from './waker.js';

/** A task registered in a queue: its resolved definition and, outside producer mode, its handlers. */
export interface RegisteredTask {
  definition: ResolvedDefinition;
  // biome-ignore lint/suspicious/noExplicitAny: handlers of every task share one registry whatever their types.
  handlers: TaskHandlers<any, any, any> | null;
}

/** Why a page in flight was stopped before it returned. */
export type StopReason = 'timeout' | 'deadline' | 'cancelled' | 'lease_lost' | 'close' | 'caller' | 'budget';

/** A page executing in this process. */
export interface InFlight {
  runId: string;
  token: number;
  /** The page's abort signal, made on first use: most handlers never read it. */
  signal(): AbortSignal;
  /** Stops the page: aborts its signal (now, or when it is made) and settles the outcome `executePage` awaits. */
  abort(reason: Error): void;
  stopReason: StopReason | null;
  /** False while the handler's promise is pending, even after a stop ended the page first. */
  readonly handlerSettled: boolean;
  /** Called once when a handler still running at its page's end settles. */
  onHandlerSettled: (() => void) | null;
}

/** The state one queue's runtime shares between its task API, workers and executions. */
export class Engine {
  /** Pages in flight in this process, by run id (a `KeyTable`: thousands come and go every second). */
  readonly inflight = new KeyTable<InFlight>();
  readonly tasks = new Map<string, RegisteredTask>();
  private readonly waker = new Waker();
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAt = Number.POSITIVE_INFINITY;
  /**
   * Pages that ended (stopped by a timeout, cancel, deadline or close and settled) while their handler, which ignored
   * its signal, still runs. Each keeps its slot until the handler settles, so such handlers cannot pile up.
   */
  straggling = 0;
  /** Who waits for the last straggling handler to settle (`noStragglers`). */
  private stragglerWaiters: (() => void)[] = [];
  /** Set by the worker loop while every slot is taken: the next freed slot wakes it. */
  waitingForSlot = false;

  /** The actor name this process writes into history for its workers (`worker:<workerId>`), made once. */
  readonly workerActor: string;

  /** Where the runtime logs (`createQueue({ logger })`). */
  readonly log: Logger;
  /** The spans of `telemetry.tracer`, if any. */
  readonly tracing: Tracing;

  /** This process's history writes, for `queue.watch`. */
  readonly feed = new FeedSignal();
  /** The queue's store, its write verbs observed by `feed`. */
  readonly store: Store;
  /** Aborted when the queue starts closing: watchers end. */
  readonly closing = new AbortController();

  constructor(readonly options: ResolvedQueueOptions) {
    this.store = this.feed.observe(options.store);
    this.workerActor = `worker:${options.runtime.workerId}`;
    this.log = options.logger;
    this.tracing = new Tracing(this);
  }

  get namespace(): string {
    return this.options.namespace;
  }

  now(): number {
    return this.options.clock.now();
  }

  /** Wakes the worker loop now (a run was started or a slot freed in this process). */
  wake(): void {
    this.waker.wake();
  }

  /** A page of this process settled: wakes the worker loop if it is waiting for a free slot. */
  slotFreed(): void {
    if (this.waitingForSlot) this.wake();
  }

  /** A page whose handler ignored its stop holds its slot from now on, until `stragglerEnded`. */
  stragglerStarted(): void {
    this.straggling++;
  }

  /** A straggling handler settled: its slot is free. */
  stragglerEnded(): void {
    this.straggling--;
    this.slotFreed();
    if (this.straggling === 0) for (const wake of this.stragglerWaiters.splice(0)) wake();
  }

  /** Resolves once no stopped page's handler still runs. */
  noStragglers(): Promise<void> {
    if (this.straggling === 0) return Promise.resolve();
    return new Promise((resolve) => this.stragglerWaiters.push(resolve));
  }

  /** Wakes the worker loop at `at` (epoch ms, by this queue's clock), unless an earlier wake is already set. */
  wakeAtTime(at: number): void {
    if (at >= this.wakeAt) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = null;
        this.wakeAt = Number.POSITIVE_INFINITY;
        this.wake();
      },
      // setTimeout holds at most 2^31-1 ms (~24.8 days); a later wake is still found by the poll.
      Math.min(2_147_483_647, Math.max(0, at - this.now())),
    );
    this.wakeTimer.unref?.();
  }

  /** Sleeps until `wake()` or `ms` passes. */
  sleep(ms: number): Promise<void> {
    return this.waker.sleep(ms);
  }

  /** Set by the queue: wakes the callback loop when this process wrote callback events. */
  onEventsWritten: (() => void) | null = null;

  /** Tells the callback loop that new callback events may be due. */
  eventsWritten(): void {
    this.onEventsWritten?.();
  }

  /** Clears timers the engine owns. */
  dispose(): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
    this.wake();
  }

  /**
   * Transition events of runs whose `task.start` in this process has not returned yet, held until it reports the
   * run's `STARTED`: a worker of this process can claim a run (and report it) before the start's own answer is
   * read, when both answers arrive together. Only kept while a telemetry sink is set.
   */
  private readonly starting = new Map<string, TelemetryEvent[]>();

  /** `task.start` is about to create `runId`: its later transitions are reported after its start (see `started`). */
  starts(runId: string): void {
    if (this.options.telemetry.sink !== null) this.starting.set(runId, []);
  }

  /** The start of `runId` returned (`write` is its first write, or `null` if it failed): report it, then what waited. */
  started(runId: string, write: RunWrite | null): void {
    const held = this.starting.get(runId);
    this.starting.delete(runId);
    this.written(write);
    if (held === undefined) return;
    for (const event of held) emitTelemetry(this.log, this.options.telemetry.sink, event);
  }

  /** The latest store failure that ended a page's commit, until a later write goes through (shown by `health()`). */
  commitFailure: unknown = null;

  /**
   * A page's commit failed in the store (not in the application's effect or check): no attempt is consumed. The run
   * keeps its lease, which expires, and is recovered as after a crash; `health()` says why meanwhile.
   */
  /**
   * A page's commit reached the store: the last commit failure no longer stands. Only a commit clears it (a claim
   * that works says nothing of commits), so a commit that keeps failing keeps `health()` degraded.
   */
  commitSucceeded(): void {
    if (this.commitFailure !== null) this.commitFailure = null;
  }

  storeFailedAtCommit(runId: string, error: unknown): void {
    this.commitFailure = error;
    const err = errorFields(error);
    this.log.error(
      { loop: 'commits', runId, code: err.code, err: logError(error) },
      'page commit failed in the store; the lease will recover the run',
    );
  }

  /** Reports every history entry of a write to telemetry. */
  written(write: RunWrite | null): void {
    if (write === null) return;
    this.tracing.written(write);
    const sink = this.options.telemetry.sink;
    // Without a sink there is nothing to build the events for.
    if (sink !== null) {
      const held = this.starting.size === 0 ? undefined : this.starting.get(write.run.runId);
      for (const entry of write.history) {
        const event: TelemetryEvent = {
          type: 'transition',
          namespace: write.run.namespace,
          runId: write.run.runId,
          task: { name: write.run.taskName, version: write.run.taskVersion },
          revision: entry.seq,
          entry,
        };
        if (held === undefined) emitTelemetry(this.log, sink, event);
        else held.push(event);
      }
    }
    if (write.run.status === 'failed') this.logFailed(write);
    if (write.events.length > 0) this.eventsWritten();
    if (write.run.status === 'retrying' && write.run.dueAt !== null) this.wakeAtTime(write.run.dueAt);
    // Children made pending, or a child's settle that may have woken its parent (in the store's same transaction).
    if (
      write.run.status === 'pending' ||
      write.children !== undefined ||
      (write.run.parent !== null && isTerminal(write.run.status))
    )
      this.wake();
  }

  /** Logs a run that ended `failed` (at `warn`), with its query and state only under `logPayloads`. */
  private logFailed(write: RunWrite): void {
    const { run } = write;
    const entry = write.history[write.history.length - 1];
    if (entry?.to !== 'failed') return;
    const payload = this.options.logPayloads ? { query: run.query, state: run.state } : {};
    this.log.warn(
      {
        runId: run.runId,
        task: run.taskName,
        version: run.taskVersion,
        reason: entry.reason,
        code: run.error?.code,
        err: run.error === null ? undefined : logStoredError(run.error),
        ...payload,
      },
      'run failed',
    );
  }

  /** Aborts a page of this run in flight in this process, if any. */
  stopLocal(runId: string, reason: StopReason): void {
    const flight = this.inflight.get(runId);
    if (!flight || flight.stopReason !== null) return;
    flight.stopReason = reason;
    flight.abort(abortError(reason));
  }

  /** Summarises a thrown value as a `RunError` whose stored JSON is at most `limits.errorBytes` bytes. */
  toRunError(error: unknown): RunError {
    return summarizeError(error, this.options.limits.errorBytes);
  }

  /** A short detail object for history, from a check's answer. */
  checkDetail(result: unknown): Json {
    const answer = (result ?? {}) as { reason?: unknown; detail?: Json };
    const detail: Record<string, Json> = {};
    if (answer.reason !== undefined) detail.reason = String(answer.reason);
    if (answer.detail !== undefined) detail.detail = answer.detail;
    return detail;
  }
}

/** The `reason` given to an aborted `ctx.signal`: an `AbortError` naming why. */
export function abortError(reason: StopReason): Error {
  const error = new Error(`page stopped: ${reason}`);
  error.name = reason === 'timeout' ? 'TimeoutError' : 'AbortError';
  return error;
}
