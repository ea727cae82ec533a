import { expect, it } from 'vitest';
import type { Queue } from '../runtime/queue/create-queue.js';
import { describeArea, type HarnessFactory, type openQueue, sleep, waitFor } from './harness.js';

/** task.run: waiting windows, one winner, caller cancellation, operator stops from elsewhere. */
export function taskRunSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('task.run', factory, (area) => {
    /** A queue whose only executor is `task.run` (`concurrency: 0`), unless `concurrency` says otherwise. */
    async function runner(handlers: Parameters<typeof openQueue<Tx>>[2], concurrency = 0) {
      const opened = await area.open(area.h.store, { name: 'manual', version: '1' }, handlers, {
        protocol: { pollMs: 20 },
        runtime: { concurrency },
      });
      return opened;
    }

    it('waits within its window for the trigger time, then runs to success', async () => {
      await area.harness();
      const producer = await area.open(area.h.store, { name: 'manual', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      const dueAt = Date.now() + 150;
      const { runId } = await producer.task.start({ query: null, trigger: { at: new Date(dueAt) } });
      let firstPageAt = 0;
      const { task } = await runner({
        execute: (ctx) => {
          if (ctx.page === 1) firstPageAt = Date.now();
          return ctx.page < 2 ? ctx.next() : ctx.end();
        },
      });
      const info = await task.run(runId, { waitMs: 5_000 });
      expect(info).toMatchObject({ status: 'success', page: 2 });
      // Against the due time, not the call: a slow machine may spend part of the wait opening the runner.
      expect(firstPageAt).toBeGreaterThanOrEqual(dueAt);
    });

    it('leaves a waiting run waiting when the window ends first', async () => {
      await area.harness();
      const { task } = await runner({ execute: (ctx) => ctx.end() });
      const { runId } = await task.start({ query: null, trigger: { event: 'never' } });
      const info = await task.run(runId, { waitMs: 60 });
      expect(info).toMatchObject({ status: 'waiting', revision: 1 });
    });

    it('lets only one of several concurrent callers execute the run', async () => {
      await area.harness();
      let executed = 0;
      const producer = await area.open(area.h.store, { name: 'manual', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      const { runId } = await producer.task.start({ query: null, trigger: { event: 'go' } });
      const { task } = await runner({
        async execute(ctx) {
          executed++;
          await sleep(30);
          return ctx.end();
        },
      });
      const callers = [
        task.run(runId, { waitMs: 3000 }),
        task.run(runId, { waitMs: 3000 }),
        task.run(runId, { waitMs: 3000 }),
      ];
      await sleep(30);
      await producer.queue.events.deliver(runId, { id: 'go-1', type: 'go' });
      const results = await Promise.all(callers);
      expect(executed).toBe(1);
      expect(results.some((r) => r?.status === 'success')).toBe(true);
      await waitFor(async () => (await task.get(runId))?.status === 'success', 'the run to succeed');
    });

    it('cancels with CALLER_CANCELLED when the caller aborts during a page, and writes no effect', async () => {
      await area.harness();
      let started = false;
      const { task } = await runner({
        async execute(ctx) {
          started = true;
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
          return ctx.end({ effect: (tx) => area.h.writeAppRow(tx, ctx.runId) });
        },
      });
      const { runId } = await task.start({ query: null, trigger: { event: 'go' } });
      const controller = new AbortController();
      const running = task.run(runId, { signal: controller.signal, waitMs: 5000 });
      await sleep(20);
      await (area.queues[0] as Queue<Tx>).events.deliver(runId, { id: 'go', type: 'go' });
      await waitFor(() => started, 'the page to start');
      controller.abort();
      const info = await running;
      expect(info).toMatchObject({ status: 'cancelled', reason: 'CALLER_CANCELLED' });
      expect(await area.h.countAppRows(runId)).toBe(0);
    });

    it('cancels a waiting run with CALLER_CANCELLED when the caller aborts while it waits', async () => {
      await area.harness();
      const { task } = await runner({ execute: (ctx) => ctx.end() });
      const { runId } = await task.start({ query: null, trigger: { event: 'never' } });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 40);
      const info = await task.run(runId, { signal: controller.signal, waitMs: 5000 });
      expect(info).toMatchObject({ status: 'cancelled', reason: 'CALLER_CANCELLED' });
    });

    it('refuses the commit of a page in flight after a persisted operator stop from another queue', async () => {
      await area.harness();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let started = false;
      const worker = await runner(
        {
          async execute(ctx) {
            started = true;
            await gate; // ignores the signal: only the commit-time re-check can stop it
            return ctx.end({ effect: (tx) => area.h.writeAppRow(tx, ctx.runId) });
          },
        },
        4,
      );
      const { runId } = await worker.task.start({ query: null });
      await waitFor(() => started, 'the page to start');
      const operatorQueue = await area.open(area.h.secondStore(), { name: 'manual', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      // A claim may commit after its page starts (PostgreSQL's held claims): read the revision once it has.
      await waitFor(
        async () => (await operatorQueue.task.get(runId))?.status === 'running',
        'the claim to be committed',
      );
      const current = await operatorQueue.task.get(runId);
      const stop = await operatorQueue.queue.operator.runs.cancel({
        runId,
        expectedRevision: current?.revision ?? 0,
        reason: 'release withdrawn',
        commandId: 'stop-1',
      });
      expect(stop).toMatchObject({ kind: 'applied', status: 'cancelled' });
      release();
      await sleep(60);
      expect(await area.h.countAppRows(runId)).toBe(0);
      const info = await worker.task.get(runId);
      expect(info).toMatchObject({ status: 'cancelled', reason: 'OPERATOR_STOP' });
      expect((await worker.task.history(runId)).at(-1)?.detail).toMatchObject({ reason: 'release withdrawn' });
    });

    it('keeps a plain page end (no effect) from overwriting an operator stop made through another store', async () => {
      await area.harness();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let started = false;
      const worker = await runner(
        {
          async execute(ctx) {
            started = true;
            await gate;
            return ctx.end();
          },
        },
        4,
      );
      const { runId } = await worker.task.start({ query: null });
      await waitFor(() => started, 'the page to start');
      const operatorQueue = await area.open(area.h.secondStore(), { name: 'manual', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      await waitFor(
        async () => (await operatorQueue.task.get(runId))?.status === 'running',
        'the claim to be committed',
      );
      const current = await operatorQueue.task.get(runId);
      await operatorQueue.queue.operator.runs.cancel({
        runId,
        expectedRevision: current?.revision ?? 0,
        reason: 'withdrawn',
        commandId: 'stop-2',
      });
      release();
      await sleep(60);
      expect(await worker.task.get(runId)).toMatchObject({ status: 'cancelled', reason: 'OPERATOR_STOP' });
      const history = await worker.task.history(runId);
      expect(history.map((entry) => entry.to)).toEqual(['pending', 'running', 'cancelled']);
    });
  });
}
