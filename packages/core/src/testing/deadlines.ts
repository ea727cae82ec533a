import { expect, it } from 'vitest';
import { describeArea, type HarnessFactory, manualClock, waitFor, waitForStatus } from './harness.js';

/** Deadlines: in flight the signal aborts; a commit after the deadline is refused. */
export function deadlinesSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('deadlines', factory, (area) => {
    it('aborts the page in flight at the deadline and cancels the run (DEADLINE)', async () => {
      const h = await area.harness();
      let aborted = false;
      const opened = await area.open(
        h.store,
        // Long enough for a loaded machine to claim the run before it: a claim after the deadline cancels the run
        // without running the page, and this test is about the page in flight.
        { name: 'slow', version: '1', limits: { deadlineMs: 400 } },
        {
          async execute(ctx) {
            await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
            aborted = true;
            return ctx.end({ effect: (tx) => h.writeAppRow(tx, ctx.runId) });
          },
        },
      );
      const { runId } = await opened.task.start({ query: null });
      const info = await waitForStatus(opened.task, runId, 'cancelled');
      expect(info.reason).toBe('DEADLINE');
      expect(info.limits.deadlineAt).not.toBeNull();
      await waitFor(() => aborted, 'the signal to abort');
      expect(await h.countAppRows(runId)).toBe(0);
    });

    it('refuses a commit that arrives after the deadline, writing no effect', async () => {
      const h = await area.harness();
      const clock = manualClock();
      const opened = await area.open(
        h.store,
        { name: 'late', version: '1' },
        {
          execute(ctx) {
            clock.advance(10_000); // the page took longer than the deadline allowed
            return ctx.end({ effect: (tx) => h.writeAppRow(tx, ctx.runId) });
          },
        },
        { clock },
      );
      const { runId } = await opened.task.start({ query: null, limits: { deadlineAt: new Date(clock.now() + 5_000) } });
      const info = await waitForStatus(opened.task, runId, 'cancelled');
      expect(info.reason).toBe('DEADLINE');
      expect(await h.countAppRows(runId)).toBe(0);
      expect((await opened.task.history(runId)).map((e) => e.reason)).toEqual(['STARTED', 'CLAIMED', 'DEADLINE']);
    });
  });
}
