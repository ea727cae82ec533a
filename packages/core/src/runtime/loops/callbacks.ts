import { claimEvent, recordDelivery, releaseEvent, renewDeliveryLease } from '../../machine/event-machine.js';
import type { CallbackEventRecord, CallbackKind, RunError } from '../../machine/run-types.js';
import { deepFreeze } from '../../util/json.js';
import { logStoredError } from '../observe/logger.js';
import { emitTelemetry } from '../observe/telemetry.js';
import type { Engine } from '../queue/engine.js';
import { Waker } from '../queue/waker.js';
import type { CallbackContext } from '../task/handlers.js';
import { LoopErrors } from './loop-errors.js';

const HANDLER_OF: Record<CallbackKind, 'onSuccess' | 'onFailure' | 'onBatchSettled'> = {
  success: 'onSuccess',
  failure: 'onFailure',
  batchSettled: 'onBatchSettled',
};

/** The callback delivery loop of one queue: `callbackConcurrency` deliveries at once, retries, dead letters. */
export class CallbackLoop {
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  /**
   * Deliveries in flight, each until its handler settled: `recorded` once its outcome is written, `done` once the
   * handler has settled too (then its slot is free).
   */
  private readonly inflight = new Map<
    string,
    { controller: AbortController; token: number; recorded: Promise<void>; done: Promise<void> }
  >();
  private readonly waker = new Waker();
  /** The loop's store errors: logged, and the last one shown by `health()`. */
  readonly errors: LoopErrors;

  constructor(private readonly engine: Engine) {
    this.errors = new LoopErrors(engine.log, 'callbacks');
  }

  /** Deliveries in flight now. */
  get size(): number {
    return this.inflight.size;
  }

  private tasks() {
    const tasks: { name: string; version: string; kinds: CallbackKind[] }[] = [];
    for (const task of this.engine.tasks.values()) {
      const handlers = task.handlers;
      if (!handlers) continue;
      const kinds = task.definition.events.filter((kind) => typeof handlers[HANDLER_OF[kind]] === 'function');
      if (kinds.length > 0) tasks.push({ name: task.definition.name, version: task.definition.version, kinds });
    }
    return tasks;
  }

  /** Wakes the loop (new events were written in this process). */
  wake(): void {
    this.waker.wake();
  }

  /** Starts delivering, when some task of this queue has a callback handler. */
  start(): void {
    if (this.tasks().length === 0) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Stops claiming new deliveries. */
  async stopClaiming(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
  }

  /** Waits for deliveries in flight. */
  async drain(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight.values()].map((d) => d.done));
  }

  /**
   * Aborts deliveries still running and gives their events back; answers how many there were. Waits for their
   * events to be given back, not for handlers that ignore the abort (they are counted, not awaited).
   */
  async abortAll(): Promise<number> {
    const count = this.inflight.size;
    for (const delivery of this.inflight.values()) delivery.controller.abort(new Error('queue closing'));
    await Promise.allSettled([...this.inflight.values()].map((d) => d.recorded));
    return count;
  }

  private async loop(): Promise<void> {
    const { engine } = this;
    const tasks = this.tasks();
    const owner = `callbacks:${engine.options.runtime.workerId}`;
    const attempts = engine.options.defaults.callbackPolicy.attempts;
    while (this.running) {
      let claimed = 0;
      const free = engine.options.runtime.callbackConcurrency - this.inflight.size;
      if (free > 0) {
        try {
          const now = engine.now();
          const events = await engine.store.claimCallbackEvents({
            namespace: engine.namespace,
            tasks,
            limit: free,
            now,
            plan: (event) => claimEvent(event, owner, engine.options.protocol.leaseMs, attempts, now),
          });
          claimed = events.length;
          for (const event of events) {
            if (event.status === 'delivering') this.deliver(event);
            else this.abandoned(event);
          }
          this.errors.ok();
        } catch (error) {
          this.errors.failed(error);
        }
      }
      if (!this.running) break;
      if (claimed > 0 && claimed === free) {
        await this.waker.sleep(engine.options.protocol.pollMs);
      } else if (claimed === 0) {
        await this.waker.sleep(engine.options.protocol.pollMs);
      }
    }
  }

  /** An abandoned delivery that was the event's last attempt: the claim made it a dead letter. */
  private abandoned(event: CallbackEventRecord): void {
    this.report(event, event, event.lastError);
  }

  /** Reports a settled delivery attempt to telemetry, and logs a failed one (a dead letter at `warn`). */
  private report(event: CallbackEventRecord, written: CallbackEventRecord, error: RunError | null): void {
    const { engine } = this;
    if (error !== null) {
      const fields = {
        runId: event.runId,
        eventId: event.eventId,
        kind: event.kind,
        deliveryAttempt: event.deliveryAttempt,
        code: error.code,
        err: logStoredError(error),
      };
      if (written.status === 'dead_letter') engine.log.warn(fields, 'callback dead-lettered');
      else engine.log.info(fields, 'callback delivery failed; retrying');
    }
    emitTelemetry(engine.log, engine.options.telemetry.sink, {
      type: 'delivery',
      namespace: engine.namespace,
      runId: event.runId,
      eventId: event.eventId,
      kind: event.kind,
      deliveryAttempt: event.deliveryAttempt,
      outcome:
        written.status === 'delivered' ? 'delivered' : written.status === 'dead_letter' ? 'dead_letter' : 'retrying',
      ...(error === null ? {} : { error: { code: error.code, message: error.message } }),
    });
  }

  /**
   * Delivers one claimed event: the handler under its timeout, its lease renewed every `heartbeatMs` meanwhile, then
   * the outcome recorded. The slot stays taken until the handler itself settles: a handler that ignores its abort
   * signal still holds it (and `close()` counts it), so such handlers cannot pile up past `callbackConcurrency`.
   */
  private deliver(event: CallbackEventRecord): void {
    const { engine } = this;
    const task = engine.tasks.get(`${event.taskName}@${event.taskVersion}`);
    const handler = task?.handlers?.[HANDLER_OF[event.kind]];
    const token = event.lease?.token ?? 0;
    const controller = new AbortController();
    const timeoutMs = task?.definition.policy.timeoutMs ?? 30_000;
    let handlerDone: Promise<unknown> = Promise.resolve();
    const recorded = (async () => {
      const timer = setTimeout(() => controller.abort(new Error('callback timed out')), timeoutMs);
      const heartbeat = setInterval(() => void this.renewLease(event, token), engine.options.protocol.heartbeatMs);
      let outcome: { ok: true } | { ok: false; error: RunError; random: number };
      try {
        if (typeof handler !== 'function') throw new Error(`no ${HANDLER_OF[event.kind]} handler`);
        const ctx = this.contextOf(event, controller.signal);
        const running = Promise.resolve().then(() => handler.call(task?.handlers, ctx));
        handlerDone = running.catch(() => undefined);
        await Promise.race([
          running,
          new Promise((_, reject) =>
            controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }),
          ),
        ]);
        outcome = { ok: true };
      } catch (error) {
        outcome = { ok: false, error: engine.toRunError(error), random: Math.random() };
      } finally {
        clearTimeout(timer);
        clearInterval(heartbeat);
      }
      await this.record(event, token, outcome, controller.signal.aborted && !this.running);
    })();
    // Free once the outcome is recorded and the handler itself has settled (`handlerDone` never rejects).
    const done = recorded
      .then(
        () => handlerDone,
        () => handlerDone,
      )
      .then(() => {
        this.inflight.delete(event.eventId);
        this.wake();
      });
    this.inflight.set(event.eventId, { controller, token, recorded, done });
  }

  /** The handler's context for one delivery. */
  private contextOf(event: CallbackEventRecord, signal: AbortSignal): CallbackContext<unknown, unknown> {
    return {
      eventId: event.eventId,
      kind: event.kind,
      runId: event.runId,
      timestamp: event.timestamp,
      batchId: event.batchId,
      sequence: event.sequence,
      query: deepFreeze(event.query),
      state: deepFreeze(event.state),
      error: event.error,
      deliveryAttempt: event.deliveryAttempt,
      replayGeneration: event.replayGeneration,
      signal,
    };
  }

  /** A heartbeat: the delivery's lease renewed while its handler runs, so no other deliverer claims it meanwhile. */
  private async renewLease(event: CallbackEventRecord, token: number): Promise<void> {
    const { engine } = this;
    try {
      await engine.store.transactCallbackEvent(engine.namespace, event.eventId, (current) => {
        const write =
          current === null ? null : renewDeliveryLease(current, token, engine.options.protocol.leaseMs, engine.now());
        return { write, value: null };
      });
    } catch (error) {
      this.errors.failed(error, { runId: event.runId, eventId: event.eventId });
    }
  }

  /** Records a delivery's outcome (or, at close, gives the event back) and reports it. */
  private async record(
    event: CallbackEventRecord,
    token: number,
    outcome: { ok: true } | { ok: false; error: RunError; random: number },
    closing: boolean,
  ): Promise<void> {
    const { engine } = this;
    try {
      const written = await engine.store.transactCallbackEvent(engine.namespace, event.eventId, (current) => {
        if (current === null) return { write: null, value: null };
        const now = engine.now();
        const write = closing
          ? releaseEvent(current, token, now)
          : recordDelivery(current, token, outcome, engine.options.defaults.callbackPolicy, now);
        return { write, value: write };
      });
      if (written && !closing) this.report(event, written, outcome.ok ? null : outcome.error);
      if (written?.status === 'retrying') {
        setTimeout(() => this.wake(), Math.max(0, written.dueAt - engine.now())).unref?.();
      }
    } catch (error) {
      this.errors.failed(error, { runId: event.runId, eventId: event.eventId });
    }
  }
}
