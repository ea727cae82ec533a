import { expect, it } from 'vitest';
import type { RunRecord } from '../machine/run-types.js';
import type { Store, TransactPlan } from '../store/contract.js';
import { describeArea, type HarnessFactory, openQueue, waitForStatus } from './harness.js';

/** A pure plan that counts one model call (a write without history) and answers the count it saw. */
const countCall: TransactPlan<number | null> = (_tx, current) =>
  current === null
    ? { write: null, value: null }
    : {
        write: { run: { ...current, modelCallsUsed: current.modelCallsUsed + 1 }, history: [], events: [] },
        value: current.modelCallsUsed,
      };

/** Pure plans (`transact(..., { pure: true })`), which a store may batch into one transaction. */
export function batchingSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('pure transactions', factory, (area) => {
    async function producer(store: Store<Tx>) {
      const opened = await openQueue<Tx>(store, { name: 'batched', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      area.track(opened.queue);
      return opened.task;
    }

    it('applies concurrent pure plans on one run one after another, each on the row the last one left', async () => {
      const h = await area.harness();
      const task = await producer(h.store);
      const { runId } = await task.start({ query: null });
      const seen = await Promise.all(
        Array.from({ length: 10 }, () => h.store.transact('default', runId, countCall, { pure: true })),
      );
      expect([...seen].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect((await task.get(runId))?.revision).toBe(1);
      const row = await h.store.transact('default', runId, (_tx, current) => ({ write: null, value: current }));
      expect(row?.modelCallsUsed).toBe(10);
    });

    it('rejects only the call whose plan throws; the others in the same turn commit', async () => {
      const h = await area.harness();
      const task = await producer(h.store);
      const a = (await task.start({ query: 'a' })).runId;
      const b = (await task.start({ query: 'b' })).runId;
      const failing = h.store.transact(
        'default',
        a,
        () => {
          throw new Error('plan refused');
        },
        { pure: true },
      );
      const counted = h.store.transact('default', b, countCall, { pure: true });
      await expect(failing).rejects.toThrow('plan refused');
      await expect(counted).resolves.toBe(0);
      const read = (runId: string) =>
        h.store.transact<RunRecord | null>('default', runId, (_tx, current) => ({ write: null, value: current }));
      expect((await read(a))?.modelCallsUsed).toBe(0);
      expect((await read(b))?.modelCallsUsed).toBe(1);
    });

    it('decides a run this store holds on its current row after another connection changed it', async () => {
      const h = await area.harness();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const worker = await openQueue<Tx>(
        h.store,
        { name: 'batched', version: '1' },
        {
          async execute(ctx) {
            await gate;
            return ctx.end();
          },
        },
      );
      area.track(worker.queue);
      const second = h.secondStore();
      const other = await producer(second);
      try {
        const { runId } = await worker.task.start({ query: null });
        await waitForStatus(worker.task, runId, 'running');
        // A change without history from the other connection, then one with history (a cancel).
        await expect(second.transact('default', runId, countCall, { pure: true })).resolves.toBe(0);
        await expect(h.store.transact('default', runId, countCall, { pure: true })).resolves.toBe(1);
        await other.cancel(runId);
        const after = await h.store.transact<RunRecord | null>(
          'default',
          runId,
          (_tx, current) => ({ write: null, value: current }),
          { pure: true },
        );
        expect(after).toMatchObject({ status: 'cancelled', modelCallsUsed: 2, lease: null });
      } finally {
        release();
      }
    });
  });
}
