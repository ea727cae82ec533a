import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { createQueue } from '../src/index.js';
import { memoryStore, waitFor, waitForStatus } from '../src/testing/index.js';

describe('a page stopped or refused by the runtime', () => {
  it('close() aborts a page still running after closeGraceMs: its ctx.signal fires with the close reason, the run is released', async () => {
    const store = memoryStore();
    const queue = createQueue({ store, protocol: { pollMs: 10 }, runtime: { closeGraceMs: 100 } });
    let seen: AbortSignal | null = null;
    const task = queue.define(
      { name: 'long', version: '1' },
      {
        execute(ctx) {
          seen = ctx.signal;
          // Waits for its signal: only the stop can end this page.
          return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
        },
      },
    );
    await queue.ready();
    const { runId } = await task.start({ query: null });
    await waitFor(() => seen !== null, 'the page to start');
    const report = await queue.close();
    const signal = seen as unknown as AbortSignal;
    expect(signal.aborted).toBe(true);
    expect(String((signal.reason as Error).message)).toMatch(/close/);
    // Still in flight when the grace ran out: aborted, counted, and released without using an attempt.
    expect(report).toMatchObject({ status: 'closed', timedOut: true, remainingExecutions: 1 });
    const reader = createQueue({ store, runtime: { mode: 'producer' } });
    const again = reader.define({ name: 'long', version: '1' });
    await reader.ready();
    expect(await again.get(runId)).toMatchObject({ status: 'pending', reason: 'RELEASED', businessFailures: 0 });
    await reader.close();
  });

  it('a state that schema.state refuses is never committed: the attempt fails with JSON_INVALID, state unchanged', async () => {
    const queue = createQueue({
      store: memoryStore(),
      protocol: { pollMs: 10 },
      defaults: { policy: { attempts: 2, backoff: { baseMs: 1, maxMs: 2 } } },
    });
    const task = queue.define<null, { n: number }>(
      { name: 'typed', version: '1', schema: { state: v.object({ n: v.number() }) } },
      {
        execute(ctx) {
          if (ctx.page === 1) return ctx.next({ n: 1 });
          return ctx.next({ n: 'two' } as never);
        },
      },
    );
    await queue.ready();
    const { runId } = await task.start({ query: null });
    const info = await waitForStatus(task, runId, 'failed');
    expect(info).toMatchObject({ reason: 'ATTEMPTS_EXHAUSTED', page: 2, state: { n: 1 } });
    expect(info.error).toMatchObject({ code: 'JSON_INVALID' });
    expect((await task.history(runId)).filter((e) => e.reason === 'PAGE_COMMITTED')).toHaveLength(1);
    await queue.close();
  });
});
