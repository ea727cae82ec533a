import { expect, it } from 'vitest';
import { RUN_STATUSES } from '../machine/run-types.js';
import type { Queue } from '../runtime/queue/create-queue.js';
import { isDocketError } from '../util/errors.js';
import { NonRetryableError } from '../util/retry-errors.js';
import { describeArea, type HarnessFactory, manualClock, waitFor, waitForStatus } from './harness.js';

/** `operator.stats()`: counts by status and task through every kind of write, dead letters, the oldest due age. */
export function statsSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('stats', factory, (area) => {
    it('answers every status as a key, zero on an empty store, and refuses bad options', async () => {
      await area.harness();
      const { queue } = await area.open(area.h.store, { name: 'counted', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      const stats = await queue.operator.stats();
      expect(Object.keys(stats.byStatus).sort()).toEqual([...RUN_STATUSES].sort());
      expect(Object.values(stats.byStatus).every((n) => n === 0)).toBe(true);
      expect(stats).toMatchObject({ byTask: [], deadLetters: 0, oldestDueAgeMs: null });
      expect(Number.isNaN(Date.parse(stats.at))).toBe(false);
      for (const bad of [{ taskName: '' }, { taskName: 7 }, { status: 'pending' }, 'counted']) {
        const error = await queue.operator.stats(bad as never).catch((e: unknown) => e);
        expect(isDocketError(error, 'CONFIG_INVALID')).toBe(true);
      }
    });

    it('counts starts, claims, settles, cancels, retries, dead letters and deletions as they happen', async () => {
      await area.harness();
      const clock = manualClock();
      const { queue, task } = await area.open<string>(
        area.h.store,
        { name: 'counted', version: '1', events: ['failure'] },
        undefined,
        { runtime: { mode: 'producer' }, clock },
      );
      const other = (
        await area.open<string>(area.h.store, { name: 'other', version: '2' }, undefined, {
          runtime: { mode: 'producer' },
          clock,
        })
      ).task;
      const started = await task.startMany([{ query: 'ok' }, { query: 'ok' }, { query: 'fail' }, { query: 'stop' }]);
      await other.start({ query: 'ok' });
      clock.advance(5_000);
      let stats = await queue.operator.stats();
      expect(stats.byStatus.pending).toBe(5);
      expect(stats.oldestDueAgeMs).toBe(5_000);
      expect(stats.byTask.map((t) => [t.name, t.version, t.byStatus.pending])).toEqual([
        ['counted', '1', 4],
        ['other', '2', 1],
      ]);
      await atCurrentRevision(queue, 'cancel', started[3]?.runId as string, 'stats-cancel');
      const worker = await area.open<string>(
        area.h.secondStore(),
        { name: 'counted', version: '1', events: ['failure'] },
        {
          execute: (ctx) => {
            if (ctx.query === 'fail') throw new NonRetryableError('refused');
            return ctx.end();
          },
          onFailure: () => {
            throw new Error('hook down');
          },
        },
        { defaults: { callbackPolicy: { attempts: 1 } }, clock },
      );
      const failed = started[2]?.runId as string;
      for (const { runId } of started.slice(0, 2)) await waitForStatus(worker.task, runId, 'success');
      await waitForStatus(worker.task, failed, 'failed');
      stats = await waitFor(async () => {
        const s = await queue.operator.stats({ taskName: 'counted' });
        return s.deadLetters === 2 ? s : null;
      }, 'the dead letters of the failed and the cancelled run');
      expect(stats.byStatus).toMatchObject({ pending: 0, running: 0, success: 2, failed: 1, cancelled: 1 });
      expect(stats.byTask).toHaveLength(1);
      expect(stats.oldestDueAgeMs).toBeNull();
      const all = await queue.operator.stats();
      expect(all.byStatus.pending).toBe(1);
      expect(all.deadLetters).toBe(2);
      await atCurrentRevision(queue, 'retry', failed, 'stats-retry');
      stats = await queue.operator.stats({ taskName: 'counted' });
      // Sent back to pending, it may already run again: either way it is no longer counted as failed until it fails.
      expect(stats.byStatus.pending + stats.byStatus.running + stats.byStatus.failed).toBe(1);
      await waitForStatus(worker.task, failed, 'failed');
      await worker.queue.close();
      const before = await queue.operator.stats({ taskName: 'counted' });
      expect(before.byStatus).toMatchObject({ success: 2, failed: 1, cancelled: 1 });
      clock.advance(8 * 86_400_000);
      const collected = await queue.operator.maintenance.collect();
      expect(collected.runs).toBeGreaterThanOrEqual(4);
      const after = await queue.operator.stats();
      expect(after.byStatus).toMatchObject({ success: 0, failed: 0, cancelled: 0, pending: 1 });
    });
    it('counts settles per minute: each finish in its minute, a retried run again, none after collection', async () => {
      await area.harness();
      const origin = Math.floor(Date.now() / 60_000) * 60_000 - 600_000;
      const clock = manualClock(origin + 10_000);
      const { queue, task } = await area.open<string>(area.h.store, { name: 'settled', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
        clock,
      });
      for (const bad of [{ minutes: 0 }, { minutes: 1.5 }, { minutes: 1441 }, { taskName: 'settled' }, 60]) {
        const error = await queue.operator.settled(bad as never).catch((e: unknown) => e);
        expect(isDocketError(error, 'CONFIG_INVALID')).toBe(true);
      }
      const [ok, fail, stop] = await task.startMany([{ query: 'ok' }, { query: 'fail' }, { query: 'stop' }]);
      await atCurrentRevision(queue, 'cancel', stop?.runId as string, 'settled-cancel');
      clock.advance(120_000);
      const worker = await area.open<string>(
        area.h.secondStore(),
        { name: 'settled', version: '1' },
        {
          execute: (ctx) => {
            if (ctx.query === 'fail') throw new NonRetryableError('refused');
            return ctx.end();
          },
        },
        { clock },
      );
      await waitForStatus(worker.task, ok?.runId as string, 'success');
      await waitForStatus(worker.task, fail?.runId as string, 'failed');
      const three = await queue.operator.settled({ minutes: 3 });
      expect(three.minutes).toEqual([
        { start: new Date(origin).toISOString(), count: 1 },
        { start: new Date(origin + 60_000).toISOString(), count: 0 },
        { start: new Date(origin + 120_000).toISOString(), count: 2 },
      ]);
      const hour = await queue.operator.settled();
      expect(hour.minutes).toHaveLength(60);
      expect(hour.minutes.reduce((sum, m) => sum + m.count, 0)).toBe(3);
      await atCurrentRevision(queue, 'retry', fail?.runId as string, 'settled-retry');
      await waitFor(async () => {
        const again = await queue.operator.settled({ minutes: 1 });
        return again.minutes[0]?.count === 3;
      }, 'the retried run to settle again in the same minute');
      await worker.queue.close();
      clock.advance(8 * 86_400_000);
      await queue.operator.maintenance.collect();
      clock.set(origin + 130_000);
      expect((await queue.operator.settled({ minutes: 3 })).minutes.map((m) => m.count)).toEqual([0, 0, 0]);
    });
    it('counts runs waiting for a time or an event, running, and paused', async () => {
      await area.harness();
      const clock = manualClock();
      const { queue, task } = await area.open<string>(area.h.store, { name: 'parked', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
        clock,
      });
      const later = new Date(clock.now() + 3_600_000).toISOString();
      await task.start({ query: 'time', trigger: { at: later } });
      await task.start({ query: 'event', trigger: { event: 'release.ready' } });
      const paused = await task.start({ query: 'pause me' });
      await atCurrentRevision(queue, 'pause', paused.runId, 'stats-pause');
      const held = await task.start({ query: 'hold' });
      let release: () => void = () => undefined;
      const worker = await area.open<string>(
        area.h.secondStore(),
        { name: 'parked', version: '1' },
        {
          execute: async (ctx) => {
            await new Promise<void>((resolve) => {
              release = resolve;
            });
            return ctx.end();
          },
        },
        { clock },
      );
      await waitForStatus(worker.task, held.runId, 'running');
      const stats = await queue.operator.stats({ taskName: 'parked' });
      expect(stats.byStatus).toMatchObject({ waiting: 2, running: 1, paused: 1, pending: 0 });
      expect(stats.oldestDueAgeMs).toBeNull();
      release();
      await waitForStatus(worker.task, held.runId, 'success');
      expect((await queue.operator.stats({ taskName: 'parked' })).byStatus).toMatchObject({ running: 0, success: 1 });
    });
  });
}

/** An operator command on a run at the revision it has now. */
async function atCurrentRevision<Tx>(
  queue: Queue<Tx>,
  verb: 'pause' | 'cancel' | 'retry',
  runId: string,
  commandId: string,
): Promise<void> {
  const info = await queue.operator.runs.get(runId);
  await queue.operator.runs[verb]({ runId, expectedRevision: info?.revision as number, reason: verb, commandId });
}
