import { expect, it } from 'vitest';
import { isDocketError } from '../util/errors.js';
import { describeArea, type HarnessFactory, manualClock, openQueue, waitFor, waitForStatus } from './harness.js';

/** Retention and capacity: collect removes old terminal runs with history and key, never unsettled ones. */
export function retentionSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('retention', factory, (area) => {
    it('collects terminal runs past retention with their history and idempotency key; keeps unsettled ones', async () => {
      const h = await area.harness();
      const clock = manualClock();
      let deliver = false;
      const opened = await openQueue<Tx, string>(
        h.store,
        { name: 'kept', version: '1', events: ['success'] },
        {
          execute: (ctx) => ctx.end(),
          onSuccess(ctx) {
            if (!deliver && ctx.query === 'slow-callback') throw new Error('receiver down');
          },
        },
        {
          clock,
          retention: { runsMs: 60_000, deadLettersMs: 120_000 },
          defaults: { callbackPolicy: { attempts: 1000, backoff: { baseMs: 1, maxMs: 2 } } },
        },
      );
      area.track(opened.queue);
      const done = await opened.task.start({ query: 'done', idempotencyKey: 'k-done' });
      const stuck = await opened.task.start({ query: 'slow-callback', idempotencyKey: 'k-stuck' });
      const live = await opened.task.start({ query: 'live', trigger: { event: 'never' } });
      await waitForStatus(opened.task, done.runId, 'success');
      await waitForStatus(opened.task, stuck.runId, 'success');
      await waitFor(async () => (await opened.task.get(done.runId))?.callbacks.delivered === 1, 'first callback');
      expect(await opened.queue.operator.maintenance.collect()).toEqual({ runs: 0, events: 0, deadLetters: 0 });
      clock.advance(61_000);
      const collected = await opened.queue.operator.maintenance.collect();
      expect(collected).toMatchObject({ runs: 1, events: 1 });
      expect(await opened.task.get(done.runId)).toBeNull();
      expect(await opened.task.history(done.runId)).toEqual([]);
      expect(await h.raw.run(done.runId)).toBeNull();
      expect(await h.raw.historyCount(done.runId)).toBe(0);
      expect((await opened.task.get(stuck.runId))?.status).toBe('success');
      expect((await opened.task.get(live.runId))?.status).toBe('waiting');
      // The key went with its run: the same key now starts a new run.
      const again = await opened.task.start({ query: 'done', idempotencyKey: 'k-done' });
      expect(again.created).toBe(true);
      expect(again.runId).not.toBe(done.runId);
      deliver = true;
      // The manual clock stands still: keep it moving while waiting, so a retry that a delivery still in flight
      // schedules after this point also comes due.
      await waitFor(async () => {
        clock.advance(10);
        return (await opened.task.get(stuck.runId))?.callbacks.delivered === 1;
      }, 'the late callback');
      clock.advance(61_000);
      const later = await opened.queue.operator.maintenance.collect();
      expect(later.runs).toBeGreaterThanOrEqual(1);
      expect(await opened.task.get(stuck.runId)).toBeNull();
    });

    it('counts live runs against maxRuns until they are collected', async () => {
      const h = await area.harness();
      const clock = manualClock();
      const opened = await area.open(
        h.store,
        { name: 'cap', version: '1' },
        { execute: (ctx) => ctx.end() },
        {
          clock,
          limits: { maxRuns: 2 },
          retention: { runsMs: 1000, deadLettersMs: 1000 },
        },
      );
      const a = await opened.task.start({ query: 1 });
      const b = await opened.task.start({ query: 2 });
      await waitForStatus(opened.task, a.runId, 'success');
      await waitForStatus(opened.task, b.runId, 'success');
      const full = await opened.task.start({ query: 3 }).catch((e: unknown) => e);
      expect(isDocketError(full, 'CAPACITY_EXCEEDED')).toBe(true);
      clock.advance(2000);
      expect((await opened.queue.operator.maintenance.collect()).runs).toBe(2);
      expect((await opened.task.start({ query: 3 })).created).toBe(true);
    });
  });
}
