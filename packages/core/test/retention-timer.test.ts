import { describe, expect, it } from 'vitest';
import { createQueue, DocketError } from '../src/index.js';
import { manualClock, memoryStore, waitFor, waitForStatus } from '../src/testing/index.js';
import { storeWith } from './run-fixture.js';

describe('retention in a consumer queue', () => {
  it('collects finished runs past retention by itself, with nobody calling maintenance.collect', async () => {
    const store = memoryStore();
    const clock = manualClock();
    const queue = createQueue({
      store,
      clock,
      protocol: { pollMs: 10 },
      retention: { runsMs: 1_000, collectEveryMs: 50 },
    });
    const task = queue.define({ name: 'kept', version: '1' }, { execute: (ctx) => ctx.end() });
    await queue.ready();
    const { runId } = await task.start({ query: null });
    await waitForStatus(task, runId, 'success');
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(store.raw.run('default', runId)?.status).toBe('success');
    clock.advance(5_000);
    await waitFor(() => store.raw.run('default', runId) === undefined, 'the run to be collected');
    expect(await task.get(runId)).toBeNull();
    await queue.close();
  });

  it('never collects in a producer queue, nor with collectEveryMs 0', async () => {
    for (const options of [
      { runtime: { mode: 'producer' as const } },
      { retention: { runsMs: 1_000, collectEveryMs: 0 } },
    ]) {
      const store = memoryStore();
      const clock = manualClock();
      const queue = createQueue({ store, clock, protocol: { pollMs: 10 }, retention: { runsMs: 1_000 }, ...options });
      const producer = 'runtime' in options;
      const task = producer
        ? queue.define({ name: 'kept', version: '1' })
        : queue.define({ name: 'kept', version: '1' }, { execute: (ctx) => ctx.end() });
      await queue.ready();
      const { runId } = await task.start({ query: null });
      if (producer) await task.cancel(runId);
      else await waitForStatus(task, runId, 'success');
      clock.advance(5_000);
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      expect(store.raw.run('default', runId)?.status).toBe(producer ? 'cancelled' : 'success');
      await queue.close();
    }
  });
});

describe('a failed retention turn', () => {
  it('is tried again within seconds, not at the next hourly turn, and health() is ready again once it works', async () => {
    const store = memoryStore();
    let failing = true;
    const collect = store.collect.bind(store);
    const flaky = storeWith(store, {
      collect: (...args: Parameters<typeof store.collect>) =>
        failing
          ? Promise.reject(new DocketError('STORAGE_FAILURE', 'locked for a moment', { operation: 'store.collect' }))
          : collect(...args),
    });
    const queue = createQueue({ store: flaky, logger: false, protocol: { pollMs: 10 } });
    queue.define({ name: 'kept', version: '1' }, { execute: (ctx) => ctx.end() });
    await queue.ready();
    try {
      await waitFor(async () => (await queue.operator.health()).status === 'degraded', 'the failed turn', 5_000);
      expect((await queue.operator.health()).reasons.join(' ')).toMatch(/retention/);
      failing = false;
      await waitFor(async () => (await queue.operator.health()).status === 'ready', 'the retried turn', 8_000);
    } finally {
      await queue.close();
    }
  }, 15_000);
});
