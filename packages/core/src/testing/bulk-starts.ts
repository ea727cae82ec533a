import { expect, it } from 'vitest';
import type { Queue } from '../runtime/queue/create-queue.js';
import { isDocketError } from '../util/errors.js';
import { describeArea, type HarnessFactory, waitForStatus } from './harness.js';

/** `task.startMany`: input order, one transaction (all or none), keys within the call and in the store, limits. */
export function bulkStartsSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('bulk starts', factory, (area) => {
    async function producer(options: { maxRuns?: number } = {}) {
      return area.open<unknown>(area.h.store, { name: 'bulk', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
        ...(options.maxRuns === undefined ? {} : { limits: { maxRuns: options.maxRuns } }),
      });
    }

    async function runIds(queue: Queue<Tx>): Promise<string[]> {
      return (await queue.operator.runs.list({ taskName: 'bulk', limit: 200 })).items.map((r) => r.runId);
    }

    async function refusal(call: Promise<unknown>) {
      const error = await call.then(
        () => null,
        (e: unknown) => e,
      );
      if (!isDocketError(error)) throw new Error(`expected a DocketError, got ${String(error)}`);
      return error;
    }

    it('starts every input in one call, answering in input order, and the runs execute', async () => {
      await area.harness();
      const { task, queue } = await producer();
      const answers = await task.startMany([{ query: 'a' }, { query: 'b', priority: 3 }, { query: 'c' }]);
      expect(answers.map((a) => a.created)).toEqual([true, true, true]);
      expect(new Set(answers.map((a) => a.runId)).size).toBe(3);
      for (const [i, query] of ['a', 'b', 'c'].entries()) {
        const info = await task.get(answers[i]?.runId as string);
        expect(info).toMatchObject({ status: 'pending', reason: 'STARTED', query, priority: i === 1 ? 3 : 0 });
        expect(await task.history(answers[i]?.runId as string)).toMatchObject([{ seq: 1, reason: 'STARTED' }]);
      }
      expect((await runIds(queue)).sort()).toEqual(answers.map((a) => a.runId).sort());
      const worker = await area.open<string>(
        area.h.secondStore(),
        { name: 'bulk', version: '1' },
        { execute: (ctx) => ctx.end() },
      );
      for (const { runId } of answers) await waitForStatus(worker.task, runId, 'success');
    });

    it('writes nothing when one input is bad, and names its index', async () => {
      await area.harness();
      const { task, queue } = await producer();
      const bad = await refusal(
        task.startMany([{ query: 1 }, { query: 2 }, { query: () => 3 }, { query: 4 }] as never),
      );
      expect(bad.code).toBe('JSON_INVALID');
      expect(bad.details).toMatchObject({ index: 2 });
      const badOption = await refusal(task.startMany([{ query: 1 }, { query: 2, priority: 5000 }]));
      expect(badOption.code).toBe('CONFIG_INVALID');
      expect(badOption.details).toMatchObject({ index: 1 });
      for (const inputs of [[], Array.from({ length: 1001 }, (_, i) => ({ query: i })), 'nope']) {
        expect((await refusal(task.startMany(inputs as never))).code).toBe('CONFIG_INVALID');
      }
      expect(await runIds(queue)).toEqual([]);
    });

    it('answers a key used twice in the call, or already stored, with its run; another input is a conflict for the whole call', async () => {
      await area.harness();
      const { task, queue } = await producer();
      const stored = await task.start({ query: 'k1', idempotencyKey: 'k1' });
      const answers = await task.startMany([
        { query: 'k2', idempotencyKey: 'k2' },
        { query: 'k1', idempotencyKey: 'k1' },
        { query: 'k2', idempotencyKey: 'k2' },
        { query: 'none' },
      ]);
      expect(answers[0]).toMatchObject({ created: true });
      expect(answers[1]).toEqual({ runId: stored.runId, created: false });
      expect(answers[2]).toEqual({ runId: answers[0]?.runId, created: false });
      expect(answers[3]).toMatchObject({ created: true });
      const before = (await runIds(queue)).sort();
      expect(before).toHaveLength(3);
      const inCall = await refusal(
        task.startMany([
          { query: 'new', idempotencyKey: 'k3' },
          { query: 'x', idempotencyKey: 'k4' },
          { query: 'y', idempotencyKey: 'k4' },
        ]),
      );
      expect(inCall.code).toBe('IDEMPOTENCY_CONFLICT');
      expect(inCall.details).toMatchObject({ index: 2 });
      const withStored = await refusal(task.startMany([{ query: 'new' }, { query: 'other', idempotencyKey: 'k1' }]));
      expect(withStored).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', runId: stored.runId, details: { index: 1 } });
      expect((await runIds(queue)).sort()).toEqual(before);
    });

    it('refuses the whole call with CAPACITY_EXCEEDED when its new runs would pass maxRuns', async () => {
      await area.harness();
      const { task, queue } = await producer({ maxRuns: 4 });
      await task.startMany([{ query: 1 }, { query: 2 }]);
      const full = await refusal(task.startMany([{ query: 3 }, { query: 4 }, { query: 5 }]));
      expect(full.code).toBe('CAPACITY_EXCEEDED');
      expect(await runIds(queue)).toHaveLength(2);
      expect(await task.startMany([{ query: 3 }, { query: 4 }])).toHaveLength(2);
      expect(await runIds(queue)).toHaveLength(4);
    });
  });
}
