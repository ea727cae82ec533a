import type { Store } from '../../store/contract.js';
import { DocketError, isDocketError } from '../../util/errors.js';
import { thrownMessage } from '../../util/safe-error.js';
import { CallbackLoop } from '../loops/callbacks.js';
import { RetentionTimer } from '../loops/retention.js';
import { ScheduleLoop } from '../loops/schedules.js';
import { WorkerLoop } from '../loops/worker.js';
import type { Engine } from './engine.js';
import type { ResolvedQueueOptions } from './options.js';

/**
 * Opens the store; an error that is not already a `DocketError` (a custom store's own) becomes
 * `CONNECTION_UNAVAILABLE` with the original kept as its cause.
 */
async function openStore(store: Store): Promise<void> {
  try {
    await store.open();
  } catch (error) {
    if (isDocketError(error)) throw error;
    const message = thrownMessage(error);
    throw new DocketError('CONNECTION_UNAVAILABLE', `store ${store.name} could not open: ${message}`, {
      operation: 'queue.ready',
      cause: error,
    });
  }
}

/** A queue's lifecycle: `created → starting → ready → closing → closed`, or `failed` when `ready()` fails. */
export type QueueState = 'created' | 'starting' | 'ready' | 'closing' | 'closed' | 'failed';

/** What `queue.close()` resolves. */
export interface CloseResult {
  status: 'closed';
  /** True when pages were still running after `closeGraceMs` and had to be aborted and released. */
  timedOut: boolean;
  remainingExecutions: number;
  remainingCallbacks: number;
}

/** One queue's lifecycle: the store it opens, the loops it starts at `ready()` and stops at `close()`. */
export class QueueLifecycle {
  state: QueueState = 'created';
  /** The worker loop, once a consumer queue is ready. */
  workers: WorkerLoop | null = null;
  private callbacks: CallbackLoop | null = null;
  private retention: RetentionTimer | null = null;
  private schedules: ScheduleLoop | null = null;
  private readyPromise: Promise<void> | null = null;
  private closePromise: Promise<CloseResult> | null = null;
  private storeOpened = false;
  /** Set by a close() that arrives while ready() runs: the start stops at its next step. */
  private closeRequested = false;
  /** What made `ready()` fail: the cause of the `QUEUE_FAILED` that every later call meets. */
  private failure: unknown = undefined;

  constructor(
    private readonly engine: Engine,
    private readonly options: ResolvedQueueOptions,
  ) {}

  /** Throws the lifecycle's error unless the queue is ready. */
  assertUsable(operation: string): void {
    if (this.state === 'ready') return;
    if (this.state === 'created' || this.state === 'starting') {
      throw new DocketError('QUEUE_NOT_READY', 'call await queue.ready() first', { operation });
    }
    throw lifecycleError(this.state, operation, this.failure);
  }

  /** What `health()` reports of the loops: their last errors. */
  probes(): string[] {
    const reasons: string[] = [];
    const loops = [
      ['workers', this.workers],
      ['callbacks', this.callbacks],
      ['retention', this.retention],
      ['schedules', this.schedules],
    ] as const;
    for (const [name, loop] of loops) {
      const last = loop?.errors.last;
      if (last !== null && last !== undefined) reasons.push(`${name}: ${(last as Error).message}`);
    }
    const commitFailure = this.engine.commitFailure;
    if (commitFailure !== null) reasons.push(`commits: ${(commitFailure as Error).message}`);
    const straggling = this.engine.straggling;
    if (straggling > 0) {
      reasons.push(
        `workers: ${straggling} stopped page(s) whose handler ignored ctx.signal still run, each holding its slot`,
      );
    }
    return reasons;
  }

  /**
   * `queue.ready()`: once; later calls share the first one's promise while it runs or after it succeeded. After it
   * failed, a later call meets `QUEUE_FAILED` (never retryable) with the first error as its cause.
   */
  ready(): Promise<void> {
    if (this.state === 'closing' || this.state === 'closed' || this.state === 'failed') {
      return Promise.reject(lifecycleError(this.state, 'queue.ready', this.failure));
    }
    if (this.readyPromise) return this.readyPromise;
    if (this.state !== 'created') return Promise.reject(lifecycleError(this.state, 'queue.ready'));
    this.state = 'starting';
    this.readyPromise = this.start();
    return this.readyPromise;
  }

  private async start(): Promise<void> {
    const { engine, options } = this;
    try {
      await openStore(options.store);
      this.storeOpened = true;
      this.stopIfClosing();
      for (const task of engine.tasks.values()) {
        const { definition } = task;
        await options.store.registerDefinition({
          namespace: options.namespace,
          name: definition.name,
          version: definition.version,
          hash: definition.hash,
          definition: definition.canonical,
          flow: definition.flow,
        });
        this.stopIfClosing();
      }
      if (options.runtime.mode !== 'producer') this.startLoops();
      this.state = 'ready';
    } catch (error) {
      this.state = 'failed';
      this.failure = error;
      if (this.storeOpened) await options.store.close().catch(() => undefined);
      this.storeOpened = false;
      throw error;
    }
  }

  private stopIfClosing(): void {
    if (this.closeRequested) throw lifecycleError('closing', 'queue.ready');
  }

  private startLoops(): void {
    this.workers = new WorkerLoop(this.engine);
    this.workers.start();
    const loop = new CallbackLoop(this.engine);
    this.callbacks = loop;
    this.engine.onEventsWritten = () => loop.wake();
    loop.start();
    this.retention = new RetentionTimer(this.engine);
    this.retention.start();
    this.schedules = new ScheduleLoop(this.engine);
    this.schedules.start();
  }

  /** `queue.close()`: once; later calls share the first one's promise. */
  close(): Promise<CloseResult> {
    this.closePromise ??= this.stop();
    return this.closePromise;
  }

  private async stop(): Promise<CloseResult> {
    if (this.readyPromise && this.state === 'starting') {
      // A close during ready() stops the start at its next step: no worker starts, nothing is claimed.
      this.closeRequested = true;
      await this.readyPromise.catch(() => undefined);
    }
    this.state = 'closing';
    this.engine.closing.abort();
    await this.retention?.stop();
    await this.schedules?.stop();
    const executions = await this.stopWorkers();
    const remainingCallbacks = await this.stopCallbacks(executions.timedOut);
    this.engine.dispose();
    if (this.storeOpened) {
      this.storeOpened = false;
      await this.options.store.close();
    }
    this.state = 'closed';
    // Handlers that ignored their stop are still running: the close report counts them.
    const remainingExecutions = Math.max(executions.remaining, this.engine.straggling);
    const report: CloseResult = {
      status: 'closed',
      timedOut: executions.timedOut || remainingCallbacks > 0,
      remainingExecutions,
      remainingCallbacks,
    };
    const { status: _, ...fields } = report;
    if (report.timedOut)
      this.engine.log.warn(fields, 'queue closed after closeGraceMs: pages or callbacks were stopped');
    else this.engine.log.info(fields, 'queue closed');
    return report;
  }

  /**
   * Stops claiming, waits up to `closeGraceMs` for pages in flight and for handlers still running after their page
   * was stopped, then aborts and releases the rest. A handler still running then is counted, and the close timed out.
   */
  private async stopWorkers(): Promise<{ timedOut: boolean; remaining: number }> {
    const { workers, engine } = this;
    if (!workers) return { timedOut: false, remaining: 0 };
    const deadline = Date.now() + this.options.runtime.closeGraceMs;
    await workers.stopClaiming();
    if (await waitFor(workers.drain(), this.options.runtime.closeGraceMs)) {
      if (await waitFor(engine.noStragglers(), Math.max(0, deadline - Date.now()))) {
        return { timedOut: false, remaining: 0 };
      }
      return { timedOut: true, remaining: engine.straggling };
    }
    const remaining = engine.inflight.size;
    for (const flight of engine.inflight.values()) engine.stopLocal(flight.runId, 'close');
    await workers.drain();
    return { timedOut: true, remaining };
  }

  /** Stops claiming deliveries, waits for those in flight (not at all after a timeout), then aborts the rest. */
  private async stopCallbacks(timedOut: boolean): Promise<number> {
    const { callbacks } = this;
    if (!callbacks) return 0;
    await callbacks.stopClaiming();
    const delivered = await waitFor(callbacks.drain(), timedOut ? 0 : this.options.runtime.closeGraceMs);
    return delivered ? 0 : callbacks.abortAll();
  }
}

/** The error an operation meets in a queue that is not ready; `failure` is what made `ready()` fail, if it did. */
export function lifecycleError(state: QueueState, operation: string, failure?: unknown): DocketError {
  if (state === 'closing') return new DocketError('QUEUE_CLOSING', 'the queue is closing', { operation });
  if (state === 'closed') return new DocketError('QUEUE_CLOSED', 'the queue is closed', { operation });
  if (state === 'failed') {
    const why = failure instanceof Error ? `: ${failure.message}` : '';
    return new DocketError('QUEUE_FAILED', `the queue failed to start${why}`, { operation, cause: failure });
  }
  return new DocketError('QUEUE_NOT_READY', 'ready() is already in progress', { operation });
}

async function waitFor(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const result = await Promise.race([promise.then(() => true as const), timeout]);
  clearTimeout(timer);
  return result;
}
