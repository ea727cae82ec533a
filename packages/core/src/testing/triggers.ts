import { expect, it } from 'vitest';
import type { TaskHandlers } from '../runtime/task/handlers.js';
import { isDocketError } from '../util/errors.js';
import type { Json } from '../util/json.js';
import type { TestQueueOptions } from './harness.js';
import { describeArea, type HarnessFactory, manualClock, openQueue, sleep, waitFor, waitForStatus } from './harness.js';

/** Time and event triggers: never early, one transaction per event, duplicates and conflicts, no restarts. */
export function triggersSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('triggers', factory, (area) => {
    /** Opens a queue on this test's store whose one task counts its executions and ends at once. */
    async function openCounting(name: string, options?: TestQueueOptions) {
      const counter = { executed: 0 };
      const handlers: TaskHandlers<Json, Json, Tx> = {
        execute(ctx) {
          counter.executed++;
          return ctx.end();
        },
      };
      return { ...(await area.open(area.h.store, { name, version: '1' }, handlers, options)), counter };
    }

    it("checks a trigger's match in a producer without the task's handlers, and fails the run on a mismatch", async () => {
      await area.harness();
      const producer = await area.open(area.h.store, { name: 'matched', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      const trigger = { event: 'release.ready', match: { releaseId: 'r1', revision: 2 } };
      const wrong = await producer.task.start({ query: null, trigger });
      const right = await producer.task.start({ query: null, trigger });
      expect((await producer.task.get(wrong.runId))?.trigger).toEqual(trigger);
      const deliver = (runId: string, revision: number) =>
        producer.queue.events.deliver(runId, {
          id: `e-${runId}`,
          type: 'release.ready',
          payload: { releaseId: 'r1', revision },
        });
      expect(await deliver(wrong.runId, 3)).toEqual({ accepted: false, duplicate: false, status: 'failed' });
      const failed = await producer.task.get(wrong.runId);
      expect(failed?.reason).toBe('TRIGGER_INVALID');
      const last = (await producer.task.history(wrong.runId)).at(-1);
      expect((last?.detail as { reason?: string } | undefined)?.reason).toMatch(/revision/);
      expect(await deliver(right.runId, 2)).toEqual({ accepted: true, duplicate: false, status: 'pending' });
    });

    it('fails a waiting run on an event whose id or type is out of bounds; a non-string id is CONFIG_INVALID', async () => {
      await area.harness();
      const producer = await area.open(area.h.store, { name: 'bounds', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      for (const event of [
        { id: '', type: 'ready' },
        { id: 'x'.repeat(257), type: 'ready' },
        { id: 'ok', type: 'y'.repeat(129) },
      ]) {
        const { runId } = await producer.task.start({ query: null, trigger: { event: 'ready' } });
        expect(await producer.queue.events.deliver(runId, event)).toEqual({
          accepted: false,
          duplicate: false,
          status: 'failed',
        });
        expect((await producer.task.get(runId))?.reason).toBe('TRIGGER_INVALID');
        // The same bad event again is a duplicate, not a second failure.
        expect(await producer.queue.events.deliver(runId, event)).toMatchObject({ duplicate: true });
      }
      const { runId } = await producer.task.start({ query: null, trigger: { event: 'ready' } });
      const refused = await producer.queue.events
        .deliver(runId, { id: 7, type: 'ready' } as never)
        .catch((e: unknown) => e);
      expect(isDocketError(refused, 'CONFIG_INVALID')).toBe(true);
      expect((await producer.task.get(runId))?.status).toBe('waiting');
    });

    it('waits for a time trigger, never runs early, then fires with TIME_REACHED', async () => {
      await area.harness();
      const clock = manualClock();
      const opened = await openCounting('timed', { clock });
      const at = new Date(clock.now() + 60_000);
      const { runId } = await opened.task.start({ query: null, trigger: { at } });
      const waiting = await opened.task.get(runId);
      expect(waiting).toMatchObject({ status: 'waiting', trigger: { at: at.toISOString() }, dueAt: at.toISOString() });
      await sleep(60);
      expect(opened.counter.executed).toBe(0);
      clock.advance(59_000);
      await sleep(60);
      expect((await opened.task.get(runId))?.status).toBe('waiting');
      clock.advance(1_000);
      await waitForStatus(opened.task, runId, 'success');
      expect(opened.counter.executed).toBe(1);
      const reasons = (await opened.task.history(runId)).map((e) => e.reason);
      expect(reasons).toEqual(['STARTED', 'TIME_REACHED', 'CLAIMED', 'COMPLETED']);
    });

    it('fires an event trigger once; a duplicate changes nothing; other content is EVENT_CONFLICT', async () => {
      await area.harness();
      const opened = await openCounting('evented');
      const { runId } = await opened.task.start({ query: { release: 'R1' }, trigger: { event: 'release.ready' } });
      await sleep(40);
      expect((await opened.task.get(runId))?.status).toBe('waiting');
      expect(opened.counter.executed).toBe(0);
      const event = { id: 'e1', type: 'release.ready', payload: { release: 'R1' } };
      expect(await opened.queue.events.deliver(runId, event)).toMatchObject({ accepted: true, duplicate: false });
      await waitForStatus(opened.task, runId, 'success');
      const revision = (await opened.task.get(runId))?.revision;
      expect(await opened.queue.events.deliver(runId, event)).toEqual({
        accepted: false,
        duplicate: true,
        status: 'success',
      });
      const conflict = await opened.queue.events
        .deliver(runId, { ...event, payload: { release: 'R2' } })
        .catch((e: unknown) => e);
      expect(isDocketError(conflict, 'EVENT_CONFLICT')).toBe(true);
      expect((await opened.task.get(runId))?.revision).toBe(revision);
      expect(opened.counter.executed).toBe(1);
      const history = await opened.task.history(runId);
      expect(history.map((e) => e.reason)).toEqual(['STARTED', 'EVENT_RECEIVED', 'CLAIMED', 'COMPLETED']);
      expect(history[1]?.detail).toMatchObject({ eventId: 'e1' });
    });

    it('never restarts a run that is not waiting, and ignores another event type', async () => {
      const h = await area.harness();
      const opened = await area.open(h.store, { name: 'evented', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      const { runId } = await opened.task.start({ query: null, trigger: { event: 'go' } });
      expect(await opened.queue.events.deliver(runId, { id: 'x', type: 'other' })).toEqual({
        accepted: false,
        duplicate: false,
        status: 'waiting',
      });
      expect(await opened.task.cancel(runId)).toMatchObject({ status: 'cancelled', changed: true });
      expect(await opened.queue.events.deliver(runId, { id: 'e2', type: 'go' })).toEqual({
        accepted: false,
        duplicate: false,
        status: 'cancelled',
      });
      expect(await opened.queue.events.deliver('e'.repeat(32), { id: 'e3', type: 'go' })).toEqual({
        accepted: false,
        duplicate: false,
        status: null,
      });
      expect((await opened.task.history(runId)).map((e) => e.reason)).toEqual(['STARTED', 'CANCELLED']);
    });

    it('fails the waiting run with TRIGGER_INVALID when validateEvent refuses, without executing it', async () => {
      const h = await area.harness();
      let executed = 0;
      const opened = await openQueue<Tx, { release: string }>(
        h.store,
        { name: 'scoped', version: '1' },
        {
          execute(ctx) {
            executed++;
            return ctx.end();
          },
          validateEvent: ({ query, event }) =>
            (event.payload as { release?: string } | undefined)?.release === query.release || 'release does not match',
        },
      );
      area.track(opened.queue);
      const { runId } = await opened.task.start({ query: { release: 'R1' }, trigger: { event: 'ready' } });
      const result = await opened.queue.events.deliver(runId, { id: 'bad', type: 'ready', payload: { release: 'R9' } });
      expect(result).toEqual({ accepted: false, duplicate: false, status: 'failed' });
      const info = await opened.task.get(runId);
      expect(info).toMatchObject({ status: 'failed', reason: 'TRIGGER_INVALID' });
      expect((await opened.task.history(runId)).at(-1)?.detail).toMatchObject({ reason: 'release does not match' });
      await sleep(30);
      expect(executed).toBe(0);
      // The same event again is recognised; a valid one cannot restart the failed run.
      expect(
        (await opened.queue.events.deliver(runId, { id: 'bad', type: 'ready', payload: { release: 'R9' } })).duplicate,
      ).toBe(true);
      expect(
        (await opened.queue.events.deliver(runId, { id: 'good', type: 'ready', payload: { release: 'R1' } })).accepted,
      ).toBe(false);
    });

    it('refuses an event that is not of the event shape with CONFIG_INVALID and changes nothing', async () => {
      const h = await area.harness();
      const opened = await area.open(h.store, { name: 'evented', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      const { runId } = await opened.task.start({ query: null, trigger: { event: 'go' } });
      // An id or type out of bounds fails the run instead (see the test above); these are no events at all.
      for (const bad of [{ id: 7, type: 'go' }, { id: 'a' }, { id: 'a', type: 'go', extra: 1 }]) {
        const error = await opened.queue.events.deliver(runId, bad as never).catch((e: unknown) => e);
        expect(isDocketError(error, 'CONFIG_INVALID')).toBe(true);
      }
      const notJson = await opened.queue.events
        .deliver(runId, { id: 'a', type: 'go', payload: { when: new Date() } as never })
        .catch((e: unknown) => e);
      expect(isDocketError(notJson, 'JSON_INVALID')).toBe(true);
      await waitFor(async () => (await h.raw.run(runId))?.revision === 1, 'run unchanged');
    });
  });
}
