import { expect, it } from 'vitest';
import { claimEvent, recordDelivery } from '../machine/event-machine.js';
import type { TelemetryEvent } from '../runtime/observe/telemetry.js';
import type { CallbackContext } from '../runtime/task/handlers.js';
import { describeArea, type HarnessFactory, manualClock, sleep, waitFor, waitForStatus } from './harness.js';

/** Callback delivery: retries, counts, dead letters, replay, telemetry. */
export function callbacksSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('callbacks', factory, (area) => {
    const fast = { defaults: { callbackPolicy: { attempts: 3, backoff: { baseMs: 1, maxMs: 5 } } } };

    it('delivers a callback that fails twice then succeeds three times, counted once as delivered', async () => {
      const h = await area.harness();
      const deliveries: CallbackContext<unknown, unknown>[] = [];
      const telemetry: TelemetryEvent[] = [];
      const opened = await area.open(
        h.store,
        { name: 'notify', version: '1', events: ['success'] },
        {
          execute: (ctx) => ctx.end(),
          onSuccess(ctx) {
            deliveries.push(ctx);
            if (ctx.deliveryAttempt < 3) throw new Error(`not yet ${ctx.deliveryAttempt}`);
          },
        },
        { ...fast, telemetry: { sink: (event) => telemetry.push(event) } },
      );
      const { runId } = await opened.task.start({ query: { n: 1 } });
      await waitForStatus(opened.task, runId, 'success');
      const info = await waitFor(async () => {
        const current = await opened.task.get(runId);
        return current?.callbacks.delivered === 1 ? current : null;
      }, 'the callback to be delivered');
      expect(info.callbacks).toEqual({ pending: 0, delivered: 1, deadLetters: 0 });
      expect(deliveries.map((d) => d.deliveryAttempt)).toEqual([1, 2, 3]);
      expect(new Set(deliveries.map((d) => d.eventId))).toEqual(new Set([`${runId}:1:success`]));
      expect(deliveries[0]).toMatchObject({
        kind: 'success',
        runId,
        batchId: `${runId}:1`,
        query: { n: 1 },
        replayGeneration: 0,
      });
      // A delivery is reported once its settle's write has resolved, which can be just after the read above.
      const delivered = () => telemetry.filter((e) => e.type === 'delivery');
      await waitFor(() => delivered().length === 3, 'the third delivery to be reported');
      const outcomes = delivered().map((e) => (e as { outcome: string }).outcome);
      expect(outcomes).toEqual(['retrying', 'retrying', 'delivered']);
      expect(
        telemetry.filter((e) => e.type === 'transition').map((e) => (e as { entry: { reason: string } }).entry.reason),
      ).toEqual(['STARTED', 'CLAIMED', 'COMPLETED']);
    });

    it('dead-letters a callback that always fails after its attempts, and replays it with replayGeneration 1', async () => {
      const h = await area.harness();
      let fail = true;
      const generations: number[] = [];
      const opened = await area.open(
        h.store,
        { name: 'broken', version: '1', events: ['failure'], policy: { attempts: 1 } },
        {
          execute() {
            throw new Error('business failed');
          },
          onFailure(ctx) {
            generations.push(ctx.replayGeneration);
            if (fail) throw new Error('webhook down');
          },
        },
        fast,
      );
      const { runId } = await opened.task.start({ query: null });
      await waitForStatus(opened.task, runId, 'failed');
      await waitFor(async () => (await opened.task.get(runId))?.callbacks.deadLetters === 1, 'a dead letter');
      const { items, nextCursor } = await opened.queue.operator.deadLetters.list();
      expect(nextCursor).toBeNull();
      expect(items).toHaveLength(1);
      const dead = items[0]!;
      expect(dead).toMatchObject({ eventId: `${runId}:1:failure`, runId, kind: 'failure', deliveryAttempt: 3 });
      expect(dead.error?.message).toBe('webhook down');
      fail = false;
      const replay = await opened.queue.operator.deadLetters.replay({
        eventId: dead.eventId,
        expectedRevision: dead.revision,
        reason: 'webhook fixed',
        commandId: 'replay-1',
      });
      expect(replay).toMatchObject({ kind: 'applied', status: 'pending', changed: true });
      await waitFor(
        async () => (await opened.task.get(runId))?.callbacks.delivered === 1,
        'the replay to be delivered',
      );
      expect(generations).toEqual([0, 0, 0, 1]);
      expect((await opened.queue.operator.deadLetters.list()).items).toEqual([]);
    });

    it("delivers a run's events one at a time in creation order, sequence strictly increasing, success last", async () => {
      const h = await area.harness();
      const seen: { kind: string; batchId: string; sequence: number }[] = [];
      let running = 0;
      let most = 0;
      let failedOnce = false;
      const opened = await area.open(
        h.store,
        { name: 'pages', version: '1', events: ['batchSettled', 'success'] },
        {
          execute: (ctx) => (ctx.page < 3 ? ctx.next({ p: ctx.page }) : ctx.end()),
          async onBatchSettled(ctx) {
            running++;
            most = Math.max(most, running);
            await sleep(10);
            running--;
            // The last page's first delivery fails: success must still wait for it.
            if (ctx.batchId.endsWith(':3') && !failedOnce) {
              failedOnce = true;
              throw new Error('retry me');
            }
            seen.push({ kind: ctx.kind, batchId: ctx.batchId, sequence: ctx.sequence });
          },
          onSuccess(ctx) {
            seen.push({ kind: ctx.kind, batchId: ctx.batchId, sequence: ctx.sequence });
          },
        },
        { ...fast, defaults: { callbackPolicy: { attempts: 3, backoff: { baseMs: 1, maxMs: 1 } } } },
      );
      const { runId } = await opened.task.start({ query: null });
      await waitFor(async () => (await opened.task.get(runId))?.callbacks.delivered === 4, 'four deliveries');
      expect(seen.map((e) => `${e.kind}@${e.batchId}`)).toEqual([
        `batchSettled@${runId}:1`,
        `batchSettled@${runId}:2`,
        `batchSettled@${runId}:3`,
        `success@${runId}:3`,
      ]);
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.sequence).toBeGreaterThan(seen[i - 1]!.sequence);
      expect(most).toBe(1);
    });

    it('counts an abandoned delivery as an attempt: the last one makes a dead letter; a late failure changes nothing, a late success delivers', async () => {
      const h = await area.harness();
      const clock = manualClock();
      const task = { name: 'abandoned', version: '1' };
      const opened = await area.open(
        h.store,
        { ...task, events: ['success'] },
        { execute: (ctx) => ctx.end() },
        {
          clock,
          defaults: { callbackPolicy: { attempts: 2 } },
        },
      );
      const { runId } = await opened.task.start({ query: null });
      await waitForStatus(opened.task, runId, 'success');
      // Deliverers that claim the event and die: nobody answers, nobody renews the lease.
      const claimAsDeadDeliverer = () => {
        const now = clock.now();
        return h.store.claimCallbackEvents({
          namespace: 'default',
          tasks: [{ ...task, kinds: ['success'] }],
          limit: 1,
          now,
          plan: (event) => claimEvent(event, 'callbacks:dead', 3000, 2, now),
        });
      };
      const [first] = await claimAsDeadDeliverer();
      expect(first).toMatchObject({ status: 'delivering', deliveryAttempt: 1 });
      clock.advance(3001);
      const [second] = await claimAsDeadDeliverer();
      expect(second).toMatchObject({ status: 'delivering', deliveryAttempt: 2 });
      clock.advance(3001);
      const [third] = await claimAsDeadDeliverer();
      expect(third).toMatchObject({ status: 'dead_letter', deliveryAttempt: 2, lease: null });
      expect(third?.lastError?.code).toBe('LEASE_EXPIRED');
      // The second deliverer answers late with a failure: its token is stale, the dead letter stays.
      const answerLate = (outcome: Parameters<typeof recordDelivery>[2]) =>
        h.store.transactCallbackEvent('default', `${runId}:1:success`, (current) => {
          const policy = { attempts: 2, backoff: { baseMs: 1, maxMs: 1 } };
          const write = current && recordDelivery(current, second!.lease!.token, outcome, policy, clock.now());
          return { write, value: write };
        });
      const error = { code: 'LATE', name: 'Error', message: 'late', truncated: false };
      expect(await answerLate({ ok: false, error, random: 0 })).toBeNull();
      expect((await opened.task.get(runId))?.callbacks).toEqual({ pending: 0, delivered: 0, deadLetters: 1 });
      const { items } = await opened.queue.operator.deadLetters.list();
      expect(items).toMatchObject([{ eventId: `${runId}:1:success`, deliveryAttempt: 2 }]);
      // A late success is a delivery all the same: the handler did its work.
      expect(await answerLate({ ok: true })).toMatchObject({ status: 'delivered', deadAt: null });
      expect((await opened.task.get(runId))?.callbacks).toEqual({ pending: 0, delivered: 1, deadLetters: 0 });
    });
  });
}
