import { expect, it } from 'vitest';
import type { ModelProvider } from '../runtime/page/model.js';
import { describeArea, type HarnessFactory, waitForStatus } from './harness.js';

/** A provider that answers at once and counts what it was sent. */
function countingProvider(): ModelProvider & { calls: number } {
  const provider = {
    calls: 0,
    async generate() {
      provider.calls++;
      return { text: 'ok', finishReason: 'stop' as const, model: 'counting', raw: null };
    },
  };
  return provider;
}

/** Model-call budgets: reserved durably before the call, exhausted ends the run with nothing sent. */
export function budgetsSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('budgets', factory, (area) => {
    async function run(limit: number, calls: number) {
      await area.harness();
      const provider = countingProvider();
      const opened = await area.open(
        area.h.store,
        { name: 'budget', version: '1', limits: { modelCalls: limit } },
        {
          async execute(ctx) {
            for (let i = 0; i < calls; i++)
              await ctx.callModel(provider, { messages: [{ role: 'user', content: 'hi' }] });
            return ctx.end({ effect: (tx) => area.h.writeAppRow(tx, ctx.runId) });
          },
        },
      );
      const { runId } = await opened.task.start({ query: null });
      return { provider, task: opened.task, runId };
    }

    it('cancels with MODEL_CALL_BUDGET and sends nothing when the budget is 0', async () => {
      const { provider, task, runId } = await run(0, 1);
      const info = await waitForStatus(task, runId, 'cancelled');
      expect(info.reason).toBe('MODEL_CALL_BUDGET');
      expect(info.limits.modelCalls).toEqual({ limit: 0, used: 0 });
      expect(provider.calls).toBe(0);
      expect(await area.h.countAppRows(runId)).toBe(0);
    });

    it('counts reserved calls without changing the revision, and stops at the limit', async () => {
      const { provider, task, runId } = await run(1, 2);
      const info = await waitForStatus(task, runId, 'cancelled');
      expect(provider.calls).toBe(1);
      expect(info.limits.modelCalls).toEqual({ limit: 1, used: 1 });
      expect(info.revision).toBe(3); // STARTED, CLAIMED, MODEL_CALL_BUDGET: the reservation is not a transition.
    });

    it('lets a run within its budget finish', async () => {
      const { provider, task, runId } = await run(2, 2);
      const info = await waitForStatus(task, runId, 'success');
      expect(provider.calls).toBe(2);
      expect(info.limits.modelCalls.used).toBe(2);
      expect(await area.h.countAppRows(runId)).toBe(1);
    });
  });
}
