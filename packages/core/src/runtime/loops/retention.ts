import type { Engine } from '../queue/engine.js';
import { LoopErrors } from './loop-errors.js';

/** What one collection deleted. */
export interface Collected {
  runs: number;
  events: number;
  deadLetters: number;
}

/** Applies retention now: `store.collect` in batches of 500 candidates until the scan is complete. */
export async function collectExpired(engine: Engine): Promise<Collected> {
  const now = engine.now();
  const totals = { runs: 0, events: 0, deadLetters: 0 };
  let after: string | null = null;
  do {
    const batch = await engine.store.collect({
      namespace: engine.namespace,
      runsBefore: now - engine.options.retention.runsMs,
      deadLettersBefore: now - engine.options.retention.deadLettersMs,
      limit: 500,
      after,
    });
    totals.runs += batch.runs;
    totals.events += batch.events;
    totals.deadLetters += batch.deadLetters;
    after = batch.next;
  } while (after !== null);
  return totals;
}

/**
 * Retention on a schedule of its own, in consumer queues: a collection soon after `ready()` and then every
 * `retention.collectEveryMs` (default one hour), on an unref'd timer. A failed collection is kept for `health()`
 * and tried again at the next turn.
 */
export class RetentionTimer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();
  /** The turns' errors: logged, and the last one shown by `health()` until a turn succeeds. */
  readonly errors: LoopErrors;

  constructor(private readonly engine: Engine) {
    this.errors = new LoopErrors(engine.log, 'retention');
  }

  /** Starts collecting: first after `firstMs`, then every `collectEveryMs`; nothing when that is 0. */
  start(firstMs = 1_000): void {
    const every = this.engine.options.retention.collectEveryMs;
    if (every === 0) return;
    this.schedule(Math.min(firstMs, every));
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.running = collectExpired(this.engine).then(
        () => this.errors.ok(),
        (error: unknown) => this.errors.failed(error),
      );
      void this.running.then(() => {
        if (this.timer !== null) this.schedule(this.engine.options.retention.collectEveryMs);
      });
    }, ms);
    this.timer.unref?.();
  }

  /** Stops the schedule and waits for a collection in progress. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
