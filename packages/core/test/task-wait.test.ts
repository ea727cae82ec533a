import { describe, expect, it } from 'vitest';
import { createQueue, isDocketError } from '../src/index.js';
import { memoryStore } from '../src/testing/index.js';

async function producerQueue() {
  const queue = createQueue({ store: memoryStore(), runtime: { mode: 'producer' }, protocol: { pollMs: 10 } });
  const task = queue.define({ name: 'watched', version: '1' });
  await queue.ready();
  return { queue, task };
}

describe('task.wait', () => {
  it('answers a run that is not terminal as it is when the time is up, and null for a missing run', async () => {
    const { queue, task } = await producerQueue();
    const { runId } = await task.start({ query: null });
    const started = Date.now();
    const info = await task.wait(runId, { timeoutMs: 80 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(75);
    expect(info?.status).toBe('pending');
    expect(await task.wait('0'.repeat(32), { timeoutMs: 10 })).toBeNull();
    await queue.close();
  });

  it('answers as soon as the run is terminal', async () => {
    const { queue, task } = await producerQueue();
    const { runId } = await task.start({ query: null });
    setTimeout(() => void task.cancel(runId), 30);
    const info = await task.wait(runId, { timeoutMs: 10_000 });
    expect(info).toMatchObject({ status: 'cancelled', reason: 'CANCELLED' });
    await queue.close();
  });

  it('rejects with the signal reason when aborted, and refuses bad options with CONFIG_INVALID', async () => {
    const { queue, task } = await producerQueue();
    const { runId } = await task.start({ query: null });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('gave up')), 20);
    await expect(task.wait(runId, { signal: controller.signal })).rejects.toThrow('gave up');
    for (const options of [{ timeoutMs: -1 }, { timeoutMs: 1.5 }, { signal: 'x' }, { nope: 1 }, null]) {
      const error = await task.wait(runId, options as never).catch((e: unknown) => e);
      expect(isDocketError(error, 'CONFIG_INVALID')).toBe(true);
    }
    await queue.close();
  });
});
