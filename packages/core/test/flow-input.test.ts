import { afterEach, describe, expect, it } from 'vitest';
import { createQueue, isDocketError, type Queue } from '../src/index.js';
import { memoryStore } from '../src/testing/index.js';

/** The error `fn` throws or rejects with. */
async function errorOf(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('flow control: bad input is CONFIG_INVALID naming the field, and writes nothing', () => {
  const queues: Queue[] = [];
  afterEach(async () => {
    for (const queue of queues.splice(0)) await queue.close();
  });

  async function open() {
    const store = memoryStore();
    const queue = createQueue({ store, logger: false, runtime: { mode: 'producer' } });
    queues.push(queue);
    const task = queue.define({ name: 'limited', version: '1', flow: { concurrency: 2 } });
    await queue.ready();
    return { store, queue, task };
  }

  it('refuses a flow out of its bounds at define', async () => {
    const queue = createQueue({ store: memoryStore(), logger: false });
    queues.push(queue);
    const bad: [unknown, string][] = [
      [{ concurrency: 0 }, 'flow.concurrency'],
      [{ concurrency: 10_001 }, 'flow.concurrency'],
      [{ concurrency: 1.5 }, 'flow.concurrency'],
      [{ rate: { max: 0, perMs: 1000 } }, 'flow.rate.max'],
      [{ rate: { max: 100_001, perMs: 1000 } }, 'flow.rate.max'],
      [{ rate: { max: 1, perMs: 86_400_001 } }, 'flow.rate.perMs'],
      [{ rate: { max: 1 } }, 'flow.rate.perMs'],
      [{ group: { concurrency: -1 } }, 'flow.group.concurrency'],
      [{ group: { burst: 1 } }, 'flow.group'],
      [{ limit: 1 }, 'flow'],
      ['fast', 'flow'],
    ];
    for (const [flow, path] of bad) {
      const error = await errorOf(() => queue.define({ name: 't', version: '1', flow } as never));
      expect(isDocketError(error, 'CONFIG_INVALID'), JSON.stringify(flow)).toBe(true);
      expect((error as Error).message, JSON.stringify(flow)).toContain(path);
    }
  });

  it('refuses a bad group at start and startMany, writing no run', async () => {
    const { store, task } = await open();
    for (const group of ['', 'x'.repeat(257), 'a\u0000b', '\ud800', 7, null]) {
      const one = await errorOf(() => task.start({ query: 1, group } as never));
      expect(isDocketError(one, 'CONFIG_INVALID'), String(group)).toBe(true);
      const many = await errorOf(() => task.startMany([{ query: 1 }, { query: 2, group } as never]));
      expect(isDocketError(many, 'CONFIG_INVALID'), String(group)).toBe(true);
    }
    expect(store.raw.runCount()).toBe(0);
  });

  it('refuses a bad task command and a bad group filter, changing nothing', async () => {
    const { store, queue } = await open();
    const before = store.raw.dump();
    const good = { task: 'limited', expectedRevision: 1, reason: 'r', commandId: 'c' };
    for (const input of [
      { ...good, task: '' },
      { ...good, expectedRevision: 0 },
      { ...good, reason: '' },
      { ...good, commandId: 7 },
      { ...good, extra: true },
      null,
    ]) {
      const error = await errorOf(() => queue.operator.tasks.pause(input as never));
      expect(isDocketError(error, 'CONFIG_INVALID'), JSON.stringify(input)).toBe(true);
    }
    expect(store.raw.dump()).toBe(before);
    const listing = await errorOf(() => queue.operator.runs.list({ group: '' }));
    expect(isDocketError(listing, 'CONFIG_INVALID')).toBe(true);
  });

  it('reports ready in health() when every task is paused', async () => {
    const { queue } = await open();
    await queue.operator.tasks.pause({ task: 'limited', expectedRevision: 1, reason: 'outage', commandId: 'p' });
    expect(await queue.operator.health()).toEqual({ status: 'ready', reasons: [] });
  });
});
