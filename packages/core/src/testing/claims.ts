import { expect, it } from 'vitest';
import type { TaskHandlers } from '../runtime/task/handlers.js';
import type { Json } from '../util/json.js';
import { workerClaim } from './claim-request.js';
import { describeArea, type HarnessFactory, openQueue, sleep, waitFor, waitForStatus } from './harness.js';

/** Claims: one executor per run under contention, concurrency slots, immediate wake-up, task filtering. */
export function claimsSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('claims', factory, (area) => {
    it('executes each run exactly once when two workers race for the same runs', async () => {
      const h = await area.harness();
      const executions = new Map<string, number>();
      const handlers: TaskHandlers<Json, Json, Tx> = {
        execute(ctx) {
          executions.set(ctx.runId, (executions.get(ctx.runId) ?? 0) + 1);
          return ctx.end({ effect: (tx: Tx) => h.writeAppRow(tx, ctx.runId) });
        },
      };
      const producer = await area.open(h.store, { name: 'race', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) ids.push((await producer.task.start({ query: i })).runId);
      for (const workerId of ['a', 'b']) {
        const store = workerId === 'a' ? h.store : h.secondStore();
        await area.open(store, { name: 'race', version: '1' }, handlers, {
          runtime: { mode: 'consumer', workerId, concurrency: 3 },
        });
      }
      for (const id of ids) await waitForStatus(producer.task, id, 'success');
      for (const id of ids) {
        expect(executions.get(id)).toBe(1);
        expect(await h.countAppRows(id)).toBe(1);
      }
    });

    it('never runs more pages at once than runtime.concurrency', async () => {
      const h = await area.harness();
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
      area.track(queue);
      const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => task.start({ query: i })));
      for (const { runId } of ids) await waitForStatus(task, runId, 'success');
      expect(peak).toBe(2);
    });

    it('wakes its workers at once when a run is started in the same process', async () => {
      const h = await area.harness();
      const { queue, task } = await openQueue(
        h.store,
        { name: 'wake', version: '1' },
        { execute: (ctx) => ctx.end() },
        { protocol: { pollMs: 3_600_000 } },
      );
      area.track(queue);
      await sleep(20);
      const { runId } = await task.start({ query: null });
      // The poll interval is an hour: only the in-process wake-up can make this finish.
      await waitForStatus(task, runId, 'success', 5_000);
    });

    it('does not claim runs of tasks this worker does not define', async () => {
      const h = await area.harness();
      const producer = await area.open(h.store, { name: 'other', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      const { runId } = await producer.task.start({ query: 1 });
      await area.open(h.secondStore(), { name: 'mine', version: '1' }, { execute: (ctx) => ctx.end() });
      await sleep(80);
      expect((await producer.task.get(runId))?.status).toBe('pending');
      await waitFor(async () => (await h.raw.run(runId))?.status === 'pending', 'run still pending');
    });

    it("stores exactly core's plan for each run it claims, plain claims and the runs past a deadline or trigger alike", async () => {
      const h = await area.harness();
      const { queue, task } = await openQueue(h.store, { name: 'exact', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      area.track(queue);
      const soon = new Date(Date.now() + 30);
      const late = await task.start({ query: 'late', limits: { deadlineAt: soon } });
      const timed = await task.start({ query: 'timed', trigger: { at: soon } });
      const plain = await Promise.all([1, 2, 3].map((n) => task.start({ query: n })));
      await sleep(60);
      const { request, planned } = workerClaim([{ name: 'exact', version: '1' }], 8);
      const claimed = await h.store.claimDue(request);
      const status = Object.fromEntries(claimed.map((run) => [run.runId, run.status]));
      expect(status).toEqual({
        [late.runId]: 'cancelled',
        [timed.runId]: 'running',
        ...Object.fromEntries(plain.map((p) => [p.runId, 'running'])),
      });
      for (const run of claimed) {
        const write = planned.get(run.runId);
        expect(run).toEqual(write?.run);
        expect(await h.store.getRun('default', run.runId)).toEqual(write?.run);
        const history = await h.store.getHistory('default', run.runId);
        expect(history.slice(1)).toEqual(write?.history);
      }
      expect((await h.store.getHistory('default', timed.runId)).map((e) => e.reason)).toEqual([
        'STARTED',
        'TIME_REACHED',
        'CLAIMED',
      ]);
    });

    it('claims at most `limit` runs across several tasks, the earliest due first, and leaves the rest as they were', async () => {
      const h = await area.harness();
      const a = await openQueue(h.store, { name: 'first', version: '1' }, undefined, { runtime: { mode: 'producer' } });
      const b = await openQueue(h.store, { name: 'second', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      area.track(a.queue, b.queue);
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        ids.push((await (i % 2 === 0 ? a : b).task.start({ query: i })).runId);
        await sleep(2); // distinct due times
      }
      const tasks = [
        { name: 'first', version: '1' },
        { name: 'second', version: '1' },
      ];
      const claimed = await h.store.claimDue(workerClaim(tasks, 3).request);
      expect(claimed.map((run) => run.runId).sort()).toEqual(ids.slice(0, 3).sort());
      for (const runId of ids.slice(3)) {
        expect((await h.store.getRun('default', runId))?.status).toBe('pending');
        expect(await h.raw.historyCount(runId)).toBe(1);
      }
    });

    it('answers the earliest time a run of the given tasks becomes claimable, and null when none will', async () => {
      const h = await area.harness();
      const now = Date.now();
      const producer = (name: string) =>
        openQueue(h.store, { name, version: '1' }, undefined, { runtime: { mode: 'producer' } });
      const late = await producer('late');
      const soon = await producer('soon');
      const done = await producer('done');
      area.track(late.queue, soon.queue, done.queue);
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
