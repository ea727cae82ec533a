import type { Engine } from '../queue/engine.js';
import { LoopErrors } from './loop-errors.js';

/** What one collection deleted. */
export interface Collected {
  runs: number;
  events: number;
  deadLetters: number;
}

/** Applies retention now: the changes feed's, then `store.collect` in batches of 500 candidates until the scan is complete. */
export async function collectExpired(engine: Engine): Promise<Collected> {
  const now = engine.now();
  const totals = { runs: 0, events: 0, deadLetters: 0 };
  // The feed first, while the entries of the runs collected next still have their history (their times).
  await trimFeed(engine, now - engine.options.retention.runsMs);
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

/** The changes feed's retention: its entries older than the runs' retention, 1,000 at a time. */
async function trimFeed(engine: Engine, before: number): Promise<void> {
  const limit = 1_000;
  while ((await engine.store.trimChanges({ namespace: engine.namespace, before, limit })) === limit);
}

/** The first retry of a failed collection, in ms. */
export const RETRY_FIRST_MS = 1_000;
/** The longest wait between retries of failed collections, in ms. */
export const RETRY_MOST_MS = 60_000;

/**
 * Retention on a schedule of its own, in consumer queues: a collection soon after `ready()` and then every
 * `retention.collectEveryMs` (default one hour), on an unref'd timer. A failed collection is kept for `health()`
 * and tried again soon: after `RETRY_FIRST_MS`, doubling up to `RETRY_MOST_MS` (never later than the next turn);
 * a collection that succeeds clears the reason.
 */
export class RetentionTimer {
  private timer: NodeJS.Timeout | null = null;
  /** Failed collections in a row: the next try waits longer. */
  private failures = 0;
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
        () => {
          this.failures = 0;
          this.errors.ok();
        },
        (error: unknown) => {
          this.failures++;
          this.errors.failed(error);
        },
      );
      void this.running.then(() => {
        if (this.timer !== null) this.schedule(this.nextInMs());
      });
    }, ms);
    this.timer.unref?.();
  }

  /** The wait before the next collection: the usual period, or a short backoff after a failed one. */
  private nextInMs(): number {
    const every = this.engine.options.retention.collectEveryMs;
    if (this.failures === 0) return every;
    return Math.min(every, RETRY_MOST_MS, RETRY_FIRST_MS * 2 ** Math.min(this.failures - 1, 16));
  }

  /** Stops the schedule and waits for a collection in progress. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
