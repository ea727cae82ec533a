import { expect, it } from 'vitest';
import { isDocketError } from '../util/errors.js';
import { describeArea, type HarnessFactory, openQueue } from './harness.js';

/** Idempotency keys: one run per key and input, conflicts refused, nothing written twice. */
export function idempotencySuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('idempotency', factory, (area) => {
    async function setup() {
      await area.harness();
      const opened = await openQueue<Tx, { n: number }>(area.h.store, { name: 'idem', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      area.track(opened.queue);
      return opened.task;
    }

    it('returns the existing run for the same key and input', async () => {
      const task = await setup();
      const first = await task.start({ query: { n: 1 }, idempotencyKey: 'k1' });
      const second = await task.start({ query: { n: 1 }, idempotencyKey: 'k1' });
      expect(first.created).toBe(true);
      expect(second).toEqual({ runId: first.runId, created: false });
      expect(await area.h.raw.historyCount(first.runId)).toBe(1);
    });

    it('refuses the same key with another query, trigger or limits, and writes nothing', async () => {
      const task = await setup();
      const first = await task.start({ query: { n: 1 }, idempotencyKey: 'k2' });
      const attempts = [
        { query: { n: 2 }, idempotencyKey: 'k2' },
        { query: { n: 1 }, idempotencyKey: 'k2', trigger: { event: 'go' } },
        { query: { n: 1 }, idempotencyKey: 'k2', limits: { modelCalls: 3 } },
      ];
      for (const attempt of attempts) {
        const error = await task.start(attempt).catch((e: unknown) => e);
        expect(isDocketError(error, 'IDEMPOTENCY_CONFLICT')).toBe(true);
        expect((error as { runId?: string }).runId).toBe(first.runId);
        expect((error as { idempotencyKey?: string }).idempotencyKey).toBe('k2');
      }
      expect(await area.h.raw.run(first.runId)).toMatchObject({ status: 'pending', revision: 1 });
    });

    it('creates exactly one run when many starts with one key race', async () => {
      const task = await setup();
      const results = await Promise.all(
        Array.from({ length: 20 }, () => task.start({ query: { n: 7 }, idempotencyKey: 'race' })),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(new Set(results.map((r) => r.runId)).size).toBe(1);
    });

    it('creates a new run for every start without a key', async () => {
      const task = await setup();
      const a = await task.start({ query: { n: 1 } });
      const b = await task.start({ query: { n: 1 } });
      expect(a.runId).not.toBe(b.runId);
      expect(a.created && b.created).toBe(true);
      // Nothing is ever compared with a keyless run's input, so it stores no hash; a keyed run stores SHA-256 hex.
      expect((await area.h.store.getRun('default', a.runId))?.inputHash).toBe('');
      const keyed = await task.start({ query: { n: 1 }, idempotencyKey: 'hashed' });
      expect((await area.h.store.getRun('default', keyed.runId))?.inputHash).toMatch(/^[0-9a-f]{64}$/);
    });

    it('canonicalises the query: key order does not make another input', async () => {
      const task = await setup();
      const a = await task.start({ query: { n: 1, m: { x: 1, y: 2 } } as never, idempotencyKey: 'order' });
      const b = await task.start({ query: { m: { y: 2, x: 1 }, n: 1 } as never, idempotencyKey: 'order' });
      expect(b).toEqual({ runId: a.runId, created: false });
    });
  });
}
