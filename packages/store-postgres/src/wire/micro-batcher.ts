import { KeyTable } from '@docket/core/store';

/** One queued call: its key (calls with one key never share a batch) and how to settle its promise. */
export interface Queued<R> {
  key: string;
  resolve: (value: R) => void;
  reject: (error: unknown) => void;
}

/** How large and how many batches a `Batcher` runs. */
export interface BatcherOptions {
  /** Most calls in one batch. */
  maxBatch: number;
  /** Most batches in flight at once (each holds one pooled connection). */
  maxRunning: number;
}

/**
 * Batched commit for an asynchronous store: calls queued in the same turn of the event loop, and calls queued while
 * earlier batches are in flight, run as one batch (one transaction) of distinct keys; two batches in flight never
 * share a key, so the calls of one key run one after the other, in order. `run` settles every item of
 * its batch itself (resolve or reject) and never throws. Under light load a batch holds one call and adds no wait;
 * under load each transaction carries many calls, so its commit (an fsync on the server) is shared.
 */
export class Batcher<I extends { key: string }> {
  private queue: I[] = [];
  private running = 0;
  /** Keys of the batches in flight: a call waits until no running batch holds its key. */
  private readonly busy = new KeyTable<true>();
  private scheduled = false;

  constructor(
    private readonly run: (batch: I[]) => Promise<void>,
    private readonly options: BatcherOptions,
  ) {}

  /** Queues one call; `run` will settle it. */
  push(item: I): void {
    this.queue.push(item);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.running >= this.options.maxRunning || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    while (this.running < this.options.maxRunning && this.queue.length > 0) {
      const batch = this.take();
      if (batch.length === 0) return; // every queued key is in flight: the end of a batch schedules again
      this.running++;
      for (const item of batch) this.busy.set(item.key, true);
      void this.run(batch).finally(() => {
        for (const item of batch) this.busy.delete(item.key);
        this.running--;
        this.schedule();
      });
    }
  }

  /** Takes up to `maxBatch` queued calls with distinct keys not in flight, oldest first; the rest keep their place. */
  private take(): I[] {
    const keys = new Set<string>();
    const batch: I[] = [];
    const rest: I[] = [];
    for (const item of this.queue) {
      if (batch.length < this.options.maxBatch && !keys.has(item.key) && !this.busy.has(item.key)) {
        keys.add(item.key);
        batch.push(item);
      } else {
        rest.push(item);
      }
    }
    this.queue = rest;
    return batch;
  }
}
