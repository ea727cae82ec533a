import { expect, it } from 'vitest';
import { describeArea, type HarnessFactory, waitFor, waitForStatus } from './harness.js';

/** Business checks at claim and at commit, and re-checking a blocked run with task.run. */
export function checksSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('business checks', factory, (area) => {
    it('blocks a run whose check fails at claim, before any work (BUSINESS_STATE)', async () => {
      const h = await area.harness();
      let executed = 0;
      let ready = false;
      const opened = await area.open(
        h.store,
        { name: 'gated', version: '1' },
        {
          check: ({ phase }) =>
            phase === 'claim' && !ready ? { ok: false, reason: 'draft', detail: { status: 'draft' } } : { ok: true },
          execute(ctx) {
            executed++;
            return ctx.end({ effect: (tx) => h.writeAppRow(tx, ctx.runId) });
          },
        },
      );
      const { runId } = await opened.task.start({ query: null });
      const blocked = await waitForStatus(opened.task, runId, 'blocked');
      expect(blocked.reason).toBe('BUSINESS_STATE');
      expect(executed).toBe(0);
      expect((await opened.task.history(runId)).at(-1)?.detail).toEqual({
        reason: 'draft',
        detail: { status: 'draft' },
      });
      // Blocked is not terminal: after the business state is fixed, task.run re-checks it and runs it.
      ready = true;
      const done = await opened.task.run(runId);
      expect(done).toMatchObject({ status: 'success' });
      expect(executed).toBe(1);
      expect(await h.countAppRows(runId)).toBe(1);
    });

    it('blocks at commit when the business state changed during the page (BUSINESS_CHANGED), writing no effect', async () => {
      const h = await area.harness();
      let changed = false;
      const opened = await area.open(
        h.store,
        { name: 'changed', version: '1' },
        {
          check: ({ phase }) =>
            phase === 'commit' && changed ? { ok: false, reason: 'revision moved' } : { ok: true },
          async execute(ctx) {
            changed = true; // the release is withdrawn while the model works
            return ctx.end({ effect: (tx) => h.writeAppRow(tx, ctx.runId) });
          },
        },
      );
      const { runId } = await opened.task.start({ query: null });
      const info = await waitForStatus(opened.task, runId, 'blocked');
      expect(info.reason).toBe('BUSINESS_CHANGED');
      expect(await h.countAppRows(runId)).toBe(0);
      expect((await opened.task.history(runId)).at(-1)?.detail).toEqual({ reason: 'revision moved' });
    });

    it('leaves a blocked run blocked when task.run re-checks and the check still fails', async () => {
      const h = await area.harness();
      const opened = await area.open(
        h.store,
        { name: 'still', version: '1' },
        {
          check: () => ({ ok: false, reason: 'not yet' }),
          execute: (ctx) => ctx.end(),
        },
      );
      const { runId } = await opened.task.start({ query: null });
      await waitForStatus(opened.task, runId, 'blocked');
      const again = await opened.task.run(runId);
      expect(again).toMatchObject({ status: 'blocked', reason: 'BUSINESS_STATE' });
      await waitFor(async () => (await opened.task.history(runId)).length === 5, 'two claims and two blocks');
    });
  });
}
