import { describe, expect, it } from 'vitest';
import type { TaskHandlers } from '../handlers.js';
import type { Json } from '../json.js';
import {
  type ConformanceHarness,
  closeAfterEach,
  type HarnessFactory,
  openQueue,
  sleep,
  waitFor,
  waitForStatus,
} from './harness.js';

/** Claims: one executor per run under contention, concurrency slots, immediate wake-up, task filtering. */
export function claimsSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describe('claims', () => {
    let h: ConformanceHarness<Tx>;
    const queues = closeAfterEach<Tx>(() => h);

    it('executes each run exactly once when two workers race for the same runs', async () => {
      h = await factory();
      const executions = new Map<string, number>();
      const handlers: TaskHandlers<Json, Json, Tx> = {
        execute(ctx) {
          executions.set(ctx.runId, (executions.get(ctx.runId) ?? 0) + 1);
          return ctx.end({ effect: (tx: Tx) => h.writeAppRow(tx, ctx.runId) });
        },
      };
      const producer = await openQueue(h.store, { name: 'race', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      queues.push(producer.queue);
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) ids.push((await producer.task.start({ query: i })).runId);
      for (const workerId of ['a', 'b']) {
        const store = workerId === 'a' ? h.store : h.secondStore();
        const w = await openQueue(store, { name: 'race', version: '1' }, handlers, {
          runtime: { mode: 'consumer', workerId, concurrency: 3 },
        });
        queues.push(w.queue);
      }
      for (const id of ids) await waitForStatus(producer.task, id, 'success');
      for (const id of ids) {
        expect(executions.get(id)).toBe(1);
        expect(await h.countAppRows(id)).toBe(1);
      }
    });

    it('never runs more pages at once than runtime.concurrency', async () => {
      h = await factory();
      let running = 0;
      let peak = 0;
      const { queue, task } = await openQueue(
        h.store,
        { name: 'slots', version: '1' },
        {
          async execute(ctx) {
            running++;
            peak = Math.max(peak, running);
            await sleep(20);
            running--;
            return ctx.end();
          },
        },
        { runtime: { concurrency: 2 } },
      );
      queues.push(queue);
      const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => task.start({ query: i })));
      for (const { runId } of ids) await waitForStatus(task, runId, 'success');
      expect(peak).toBe(2);
    });

    it('wakes its workers at once when a run is started in the same process', async () => {
      h = await factory();
      const { queue, task } = await openQueue(
        h.store,
        { name: 'wake', version: '1' },
        { execute: (ctx) => ctx.end() },
        { protocol: { pollMs: 3_600_000 } },
      );
      queues.push(queue);
      await sleep(20);
      const { runId } = await task.start({ query: null });
      // The poll interval is an hour: only the in-process wake-up can make this finish.
      await waitForStatus(task, runId, 'success', 5_000);
    });

    it('does not claim runs of tasks this worker does not define', async () => {
      h = await factory();
      const producer = await openQueue(h.store, { name: 'other', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      queues.push(producer.queue);
      const { runId } = await producer.task.start({ query: 1 });
      const worker = await openQueue(h.secondStore(), { name: 'mine', version: '1' }, { execute: (ctx) => ctx.end() });
      queues.push(worker.queue);
      await sleep(80);
      expect((await producer.task.get(runId))?.status).toBe('pending');
      await waitFor(async () => (await h.raw.run(runId))?.status === 'pending', 'run still pending');
    });

    it('answers the earliest time a run of the given tasks becomes claimable, and null when none will', async () => {
      h = await factory();
      const now = Date.now();
      const producer = (name: string) =>
        openQueue(h.store, { name, version: '1' }, undefined, { runtime: { mode: 'producer' } });
      const late = await producer('late');
      const soon = await producer('soon');
      const done = await producer('done');
      queues.push(late.queue, soon.queue, done.queue);
      await late.task.start({ query: 1, trigger: { at: new Date(now + 60_000) } });
      await soon.task.start({ query: 2, trigger: { at: new Date(now + 30_000) } });
      await soon.task.start({ query: 3, trigger: { at: new Date(now + 45_000) } });
      // A cancelled run is not claimable, however early it was due.
      const { runId } = await done.task.start({ query: 4 });
      await done.task.cancel(runId);
      const key = (name: string) => ({ name, version: '1' });
      expect(await h.store.nextDueAt('default', [key('late'), key('soon')])).toBe(now + 30_000);
      expect(await h.store.nextDueAt('default', [key('late')])).toBe(now + 60_000);
      expect(await h.store.nextDueAt('default', [key('done')])).toBeNull();
      expect(await h.store.nextDueAt('default', [{ name: 'late', version: '2' }])).toBeNull();
      expect(await h.store.nextDueAt('other', [key('late')])).toBeNull();
      expect(await h.store.nextDueAt('default', [])).toBeNull();
    });
  });
}
