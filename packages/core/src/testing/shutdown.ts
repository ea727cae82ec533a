import { expect, it } from 'vitest';
import { describeArea, type HarnessFactory, openQueue, waitFor, waitForStatus } from './harness.js';

/** Graceful shutdown: drain, then abort and release without counting an attempt. */
export function shutdownSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('shutdown', factory, (area) => {
    it('waits for a page that finishes within closeGraceMs', async () => {
      const h = await area.harness();
      let started = false;
      const opened = await openQueue(
        h.store,
        { name: 'drain', version: '1' },
        {
          async execute(ctx) {
            started = true;
            await new Promise((r) => setTimeout(r, 50));
            return ctx.end({ effect: (tx) => h.writeAppRow(tx, ctx.runId) });
          },
        },
        { runtime: { closeGraceMs: 5000 } },
      );
      const { runId } = await opened.task.start({ query: null });
      await waitFor(() => started, 'page to start');
      const result = await opened.queue.close();
      expect(result).toEqual({ status: 'closed', timedOut: false, remainingExecutions: 0, remainingCallbacks: 0 });
      expect(await h.raw.run(runId)).toMatchObject({ status: 'success' });
      expect(await h.countAppRows(runId)).toBe(1);
    });

    it('releases a page that ignores its signal after closeGraceMs, and the next worker takes it', async () => {
      const h = await area.harness();
      let firstStarted = false;
      const first = await openQueue(
        h.store,
        { name: 'release', version: '1' },
        {
          async execute(ctx) {
            firstStarted = true;
            await new Promise(() => {}); // ignores ctx.signal forever
            return ctx.end();
          },
        },
        { runtime: { closeGraceMs: 50 } },
      );
      const { runId } = await first.task.start({ query: null });
      await waitFor(() => firstStarted, 'page to start');
      const result = await first.queue.close();
      expect(result).toMatchObject({ status: 'closed', timedOut: true, remainingExecutions: 1 });
      expect(await h.raw.run(runId)).toMatchObject({ status: 'pending' });
      const second = await area.open(
        h.secondStore(),
        { name: 'release', version: '1' },
        { execute: (ctx) => ctx.end({ effect: (tx) => h.writeAppRow(tx, ctx.runId) }) },
      );
      const info = await waitForStatus(second.task, runId, 'success');
      expect(info.attempt).toBe(1);
      expect(info.businessFailures).toBe(0);
      const reasons = (await second.task.history(runId)).map((e) => e.reason);
      expect(reasons).toEqual(['STARTED', 'CLAIMED', 'RELEASED', 'CLAIMED', 'COMPLETED']);
      expect(await h.countAppRows(runId)).toBe(1);
    });
  });
}
