import { afterEach, describe, expect, it } from 'vitest';
import { createQueue, type Queue } from '../src/index.js';
import { memoryStore, waitFor } from '../src/testing/index.js';

/** A callback handler that runs for `ms` whatever its signal says, counting copies at once and calls in all. */
function slowCallback(ms: number) {
  const counts = { running: 0, most: 0, calls: 0 };
  const handler = async () => {
    counts.calls++;
    counts.running++;
    counts.most = Math.max(counts.most, counts.running);
    await new Promise((resolve) => setTimeout(resolve, ms));
    counts.running--;
  };
  return { counts, handler };
}

describe('callback deliveries', () => {
  const queues: Queue[] = [];
  afterEach(async () => {
    for (const queue of queues.splice(0)) await queue.close();
  });

  it('renew their lease while the handler runs past leaseMs: one delivery, and it is delivered', async () => {
    const { counts, handler } = slowCallback(4500);
    const queue = createQueue({
      store: memoryStore(),
      logger: false,
      runtime: { callbackConcurrency: 4 },
      protocol: { pollMs: 20, leaseMs: 3000, heartbeatMs: 1000 },
    });
    queues.push(queue);
    const task = queue.define(
      { name: 'long-callback', version: '1', events: ['success'], policy: { timeoutMs: 20_000 } },
      { execute: (ctx) => ctx.end(), onSuccess: handler },
    );
    await queue.ready();
    const { runId } = await task.start({ query: null });
    await waitFor(async () => (await task.get(runId))?.callbacks.delivered === 1, 'the delivery', 15_000);
    expect(counts.calls).toBe(1);
    expect(counts.most).toBe(1);
    expect((await queue.operator.deadLetters.list()).items).toEqual([]);
  }, 20_000);

  it('keep their slot after a timeout until the handler settles, and close() counts one still running', async () => {
    const { counts, handler } = slowCallback(1500);
    const queue = createQueue({
      store: memoryStore(),
      logger: false,
      runtime: { callbackConcurrency: 1, closeGraceMs: 50 },
      protocol: { pollMs: 10 },
      defaults: { callbackPolicy: { attempts: 1 } },
    });
    const task = queue.define(
      { name: 'stubborn-callback', version: '1', events: ['success'], policy: { timeoutMs: 100 } },
      { execute: (ctx) => ctx.end(), onSuccess: handler },
    );
    await queue.ready();
    await task.start({ query: 1 });
    await task.start({ query: 2 });
    await waitFor(() => counts.calls === 1, 'the first delivery');
    // The first delivery times out at 100 ms but its handler runs on: the second waits for the slot.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(counts.calls).toBe(1);
    const closed = await queue.close();
    expect(closed).toMatchObject({ timedOut: true, remainingCallbacks: 1 });
    expect(counts.most).toBe(1);
    await waitFor(() => counts.running === 0, 'the handler to end', 5000);
  });
});
