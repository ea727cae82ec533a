import { afterEach, describe, expect, it, vi } from 'vitest';
import { createQueue } from '../src/index.js';
import { memoryStore } from '../src/store/index.js';
import { waitForStatus } from '../src/testing/harness.js';

/** Counts the page timers scheduled from now on: heartbeats (`renewLease`) and stops (`stopPage`). */
function countPageTimers() {
  const counts = { heartbeats: 0, stops: 0 };
  const interval = globalThis.setInterval;
  const timeout = globalThis.setTimeout;
  vi.spyOn(globalThis, 'setInterval').mockImplementation(((fn: (...args: unknown[]) => void, ...rest: unknown[]) => {
    if (fn.name === 'renewLease') counts.heartbeats++;
    return interval(fn, ...(rest as [number]));
  }) as typeof setInterval);
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: (...args: unknown[]) => void, ...rest: unknown[]) => {
    if (fn.name === 'stopPage') counts.stops++;
    return timeout(fn, ...(rest as [number]));
  }) as typeof setTimeout);
  return counts;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('page timers', () => {
  it('gives a handler that returned synchronously no timeout, deadline or heartbeat, and a running one all three', async () => {
    const store = memoryStore();
    const queue = createQueue({ store, runtime: { mode: 'all', concurrency: 4 } });
    const sync = queue.define({ name: 'sync', version: '1' }, { execute: (ctx) => ctx.end() });
    const running = queue.define(
      { name: 'running', version: '1' },
      {
        async execute(ctx) {
          await new Promise((resolve) => setImmediate(resolve));
          return ctx.end();
        },
      },
    );
    const counts = countPageTimers();
    try {
      await queue.ready();
      const a = await sync.start({ query: 1, limits: { deadlineAt: new Date(Date.now() + 60_000) } });
      await waitForStatus(sync, a.runId, 'success');
      expect(counts).toEqual({ heartbeats: 0, stops: 0 });

      const b = await running.start({ query: 2, limits: { deadlineAt: new Date(Date.now() + 60_000) } });
      await waitForStatus(running, b.runId, 'success');
      // The timeout and the deadline are stops; the heartbeat renews the lease while the handler runs.
      expect(counts).toEqual({ heartbeats: 1, stops: 2 });
    } finally {
      await queue.close();
    }
  });
});
