import { describe, expect, it } from 'vitest';
import { createQueue, DocketError, isDocketError } from '../src/index.js';
import { memoryStore, sleep, waitFor } from '../src/testing/index.js';
import { storeWith } from './run-fixture.js';

describe('health() while page commits keep failing in the store', () => {
  it('stays degraded though later claims work, and clears once a commit goes through', async () => {
    const store = memoryStore();
    let failCommits = true;
    const transact = store.transact.bind(store);
    // Page commits (pure plans) fail as a store that cannot write would; claims (claimDue) still work.
    const failing = storeWith(store, {
      transact: (...args: Parameters<typeof store.transact>) =>
        failCommits && args[3]?.pure === true
          ? Promise.reject(new DocketError('STORAGE_FAILURE', 'disk says no', { operation: 'store.transact' }))
          : transact(...args),
    } as Partial<typeof store>);
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const queue = createQueue({ store: failing, logger: false, protocol: { pollMs: 10, leaseMs: 3000 } });
    const task = queue.define<string, null>(
      { name: 'stuck', version: '1' },
      { execute: async (ctx) => (ctx.query === 'held' ? gate.then(() => ctx.end()) : ctx.end()) },
    );
    await queue.ready();
    try {
      const first = await task.start({ query: 'fails' });
      await waitFor(async () => (await queue.operator.health()).status === 'degraded', 'the failed commit');
      // A later claim works: it says nothing of commits, so health stays degraded while that page runs.
      const held = await task.start({ query: 'held' });
      await waitFor(async () => (await task.get(held.runId))?.status === 'running', 'the second claim');
      for (let i = 0; i < 5; i++) {
        const health = await queue.operator.health();
        expect(health.status).toBe('degraded');
        expect(health.reasons.some((r) => r.startsWith('commits: '))).toBe(true);
        await sleep(10);
      }
      failCommits = false;
      release();
      expect((await task.wait(held.runId, { timeoutMs: 10_000 }))?.status).toBe('success');
      expect((await queue.operator.health()).status).toBe('ready');
      // The first run's lease expires and it is recovered, then committed.
      expect((await task.wait(first.runId, { timeoutMs: 15_000 }))?.status).toBe('success');
    } finally {
      release();
      await queue.close();
    }
  });

  it('refuses a workerId that PostgreSQL could not store (NUL) in createQueue', () => {
    let error: unknown;
    try {
      createQueue({ store: memoryStore(), runtime: { workerId: 'w\u00001' } });
    } catch (e) {
      error = e;
    }
    expect(isDocketError(error, 'CONFIG_INVALID')).toBe(true);
  });
});
