import { expect, it } from 'vitest';
import { describeArea, type HarnessFactory, openQueue, waitForStatus } from './harness.js';

/** Effects commit with the transition or not at all. */
export function rollbackSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('rollback', factory, (area) => {
    it('rolls back the state change and the effect together when the effect throws', async () => {
      const h = await area.harness();
      const opened = await openQueue<Tx, null, { step: number }>(
        h.store,
        { name: 'effect-throws', version: '1', policy: { attempts: 2 } },
        {
          execute(ctx) {
            return ctx.next(
              { step: 1 },
              {
                effect: (tx) => {
                  h.writeAppRow(tx, ctx.runId);
                  throw new Error('constraint');
                },
              },
            );
          },
        },
      );
      area.track(opened.queue);
      const { runId } = await opened.task.start({ query: null });
      const info = await waitForStatus(opened.task, runId, 'failed');
      expect(info).toMatchObject({ page: 1, state: null, reason: 'ATTEMPTS_EXHAUSTED', businessFailures: 2 });
      expect(info.error?.message).toBe('constraint');
      expect(await h.countAppRows(runId)).toBe(0);
      expect(await h.raw.historyCount(runId)).toBe(info.revision);
    });

    it('commits the effect exactly once with the page', async () => {
      const h = await area.harness();
      const opened = await area.open(
        h.store,
        { name: 'effect-ok', version: '1' },
        { execute: (ctx) => ctx.end({ effect: (tx) => h.writeAppRow(tx, ctx.runId) }) },
      );
      const { runId } = await opened.task.start({ query: null });
      await waitForStatus(opened.task, runId, 'success');
      expect(await h.countAppRows(runId)).toBe(1);
    });

    it('handles an effect that returns a promise by the store capability', async () => {
      const h = await area.harness();
      const opened = await area.open(
        h.store,
        { name: 'effect-async', version: '1', policy: { attempts: 3 } },
        {
          execute: (ctx) =>
            ctx.end({
              effect: async (tx) => {
                await h.writeAppRow(tx, ctx.runId);
              },
            }),
        },
      );
      const { runId } = await opened.task.start({ query: null });
      if (h.store.capabilities.asyncTransactions) {
        await waitForStatus(opened.task, runId, 'success');
        expect(await h.countAppRows(runId)).toBe(1);
      } else {
        const info = await waitForStatus(opened.task, runId, 'failed');
        expect(info.reason).toBe('HANDLER_CONTRACT_INVALID');
        expect(info.error?.message).toMatch(/synchronous/);
        expect(await h.countAppRows(runId)).toBe(0);
      }
    });
  });
}
