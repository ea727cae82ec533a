import { afterEach, describe, expect, it, vi } from 'vitest';
import { createQueue } from '../src/index.js';
import { memoryStore } from '../src/store/index.js';
import { waitForStatus } from '../src/testing/harness.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the settle of a page whose handler returned synchronously', () => {
  it('frees its slot when its commit fails: the failure is written, and the next run is claimed into the slot', async () => {
    const store = memoryStore();
    const transact = store.transact.bind(store);
    let failed = 0;
    // The first pure transaction after the claim is the page's commit: it fails once, as a store that lost its
    // connection would. The failure's own write (the retry) goes through.
    vi.spyOn(store, 'transact').mockImplementation(((...args: Parameters<typeof store.transact>) => {
      if (args[3]?.pure === true && failed === 0) {
        failed++;
        return Promise.reject(new Error('injected commit failure'));
      }
      return transact(...args);
    }) as typeof store.transact);
    const queue = createQueue({ store, runtime: { mode: 'all', concurrency: 1 } });
    const task = queue.define(
      { name: 'sync-end', version: '1', policy: { attempts: 3, backoff: { baseMs: 10, maxMs: 10 } } },
      { execute: (ctx) => ctx.end() },
    );
    try {
      await queue.ready();
      const first = await task.start({ query: 1 });
      await waitForStatus(task, first.runId, ['retrying', 'success']);
      expect(failed).toBe(1);
      const second = await task.start({ query: 2 });
      // One slot: the second run is claimed only if the first page gave its slot back.
      await waitForStatus(task, second.runId, 'success');
      await waitForStatus(task, first.runId, 'success');
      const history = await task.history(first.runId);
      expect(history.map((entry) => entry.reason)).toContain('ATTEMPT_FAILED');
    } finally {
      await queue.close();
    }
  });
});
