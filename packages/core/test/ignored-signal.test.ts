import { describe, expect, it } from 'vitest';
import { createQueue } from '../src/index.js';
import { memoryStore, waitFor } from '../src/testing/index.js';

/** A handler that ignores ctx.signal: it runs for `ms` whatever happens, counting how many copies run at once. */
function stubbornHandler(ms: number) {
  const counts = { running: 0, most: 0, started: 0 };
  const execute = async (ctx: { end(): unknown }) => {
    counts.started++;
    counts.running++;
    counts.most = Math.max(counts.most, counts.running);
    await new Promise((resolve) => setTimeout(resolve, ms));
    counts.running--;
    return ctx.end();
  };
  return { counts, execute };
}

describe('a handler that ignores its signal', () => {
  it('keeps its slot after a timeout until it settles, so copies never pile up, and health says so', async () => {
    const { counts, execute } = stubbornHandler(400);
    const queue = createQueue({
      store: memoryStore(),
      runtime: { concurrency: 1 },
      protocol: { pollMs: 10 },
      defaults: { policy: { attempts: 3, timeoutMs: 50, backoff: { baseMs: 1, maxMs: 1 } } },
    });
    const task = queue.define({ name: 'stubborn', version: '1' }, { execute: execute as never });
    await queue.ready();
    await task.start({ query: 1 });
    await task.start({ query: 2 });
    await waitFor(
      async () => (await task.get((await queue.operator.runs.list()).items[0]!.runId))?.status === 'retrying',
      'the first attempt to time out',
    );
    const health = await queue.operator.health();
    expect(health.status).toBe('degraded');
    expect(health.reasons.join(' ')).toMatch(/ignored ctx.signal/);
    await waitFor(() => counts.started >= 3, 'three attempts to start');
    expect(counts.most).toBe(1);
    const closed = await queue.close();
    expect(closed.status).toBe('closed');
  });

  it('is counted in the close report while it still runs after its run ended', async () => {
    const { counts, execute } = stubbornHandler(400);
    const queue = createQueue({
      store: memoryStore(),
      runtime: { concurrency: 2, closeGraceMs: 20 },
      protocol: { pollMs: 10 },
      defaults: { policy: { attempts: 1, timeoutMs: 50 } },
    });
    const task = queue.define({ name: 'stubborn', version: '1' }, { execute: execute as never });
    await queue.ready();
    const { runId } = await task.start({ query: 1 });
    await waitFor(async () => (await task.get(runId))?.status === 'failed', 'the attempt to time out');
    expect(counts.running).toBe(1);
    const closed = await queue.close();
    expect(closed).toMatchObject({ status: 'closed', timedOut: true, remainingExecutions: 1 });
    await waitFor(() => counts.running === 0, 'the handler to end');
  });

  it('is waited for by close() within closeGraceMs after its page was stopped', async () => {
    const { counts, execute } = stubbornHandler(400);
    const queue = createQueue({
      store: memoryStore(),
      logger: false,
      runtime: { concurrency: 2, closeGraceMs: 5000 },
      protocol: { pollMs: 10 },
      defaults: { policy: { attempts: 1, timeoutMs: 50 } },
    });
    const task = queue.define({ name: 'stubborn', version: '1' }, { execute: execute as never });
    await queue.ready();
    const { runId } = await task.start({ query: 1 });
    await waitFor(async () => (await task.get(runId))?.status === 'failed', 'the attempt to time out');
    expect(counts.running).toBe(1);
    const closed = await queue.close();
    expect(counts.running).toBe(0);
    expect(closed).toEqual({ status: 'closed', timedOut: false, remainingExecutions: 0, remainingCallbacks: 0 });
  });
});
