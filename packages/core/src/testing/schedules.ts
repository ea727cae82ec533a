import { expect, it } from 'vitest';
import { createQueue, type Queue } from '../runtime/queue/create-queue.js';
import { isDocketError } from '../util/errors.js';
import { describeArea, type HarnessFactory, manualClock, sleep, waitFor } from './harness.js';

/** 2027-01-04T00:00:30Z: half a minute past a minute boundary, so minute slots are never at the clock's own time. */
const T0 = Date.UTC(2027, 0, 4, 0, 0, 30);
const MINUTE = 60_000;

/** Schedules: persisted cron schedules, fired once per slot by consumers, misfire policies, operator commands. */
export function schedulesSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('schedules', factory, (area) => {
    const definition = { name: 'cron', version: '1' };

    async function runsOf(queue: Queue<Tx>) {
      const { items } = await queue.operator.runs.list({ taskName: 'cron', limit: 200, payloads: true });
      return items;
    }

    /** A consumer of the `cron` task on `clock` that counts its executions by slot. */
    async function consumer(clock: ReturnType<typeof manualClock>, executed: string[], second = false) {
      return area.open<unknown>(
        second ? area.h.secondStore() : area.h.store,
        definition,
        {
          execute(ctx) {
            executed.push(ctx.runId);
            return ctx.end();
          },
        },
        { clock },
      );
    }

    it('persists a schedule: created once, a new revision only when a setting changes, and refuses bad ones', async () => {
      await area.harness();
      const clock = manualClock(T0);
      const { task, queue } = await area.open(area.h.store, definition, undefined, {
        runtime: { mode: 'producer' },
        clock,
      });
      expect(await task.schedule('every-minute', { cron: '* * * * *', query: { a: 1 } })).toEqual({
        scheduleId: 'every-minute',
        created: true,
        revision: 1,
      });
      expect(await task.schedule('every-minute', { cron: '* * * * *', query: { a: 1 } })).toEqual({
        scheduleId: 'every-minute',
        created: false,
        revision: 1,
      });
      expect(await task.schedule('every-minute', { cron: '*/5 * * * *', query: { a: 1 } })).toMatchObject({
        created: false,
        revision: 2,
      });
      const { items } = await queue.operator.schedules.list();
      expect(items).toEqual([
        {
          id: 'every-minute',
          task: definition,
          cron: '*/5 * * * *',
          timezone: 'UTC',
          query: { a: 1 },
          misfire: 'latest',
          enabled: true,
          nextAt: '2027-01-04T00:05:00.000Z',
          lastSlotAt: null,
          revision: 2,
        },
      ]);
      const refusals: [unknown, string][] = [
        [{ cron: 'not a cron', query: 1 }, 'cron'],
        [{ cron: '* * * * * * *', query: 1 }, 'cron'],
        [{ cron: '* * * * *', timezone: 'Mars/Base', query: 1 }, 'timezone'],
        [{ cron: '* * * * *', query: 1, every: 5 }, 'every'],
        [{ cron: '* * * * *', query: 1, misfire: 'sometimes' }, 'misfire'],
      ];
      for (const [options, field] of refusals) {
        const error = await task.schedule('bad', options as never).catch((e: unknown) => e);
        expect(isDocketError(error, 'CONFIG_INVALID'), field).toBe(true);
        expect(JSON.stringify((error as { details?: unknown }).details), field).toContain(field);
      }
      const badId = await task.schedule('not an id!', { cron: '* * * * *', query: 1 }).catch((e: unknown) => e);
      expect(isDocketError(badId, 'CONFIG_INVALID')).toBe(true);
      expect((await queue.operator.schedules.list()).items).toHaveLength(1);
      expect(await task.unschedule('every-minute')).toEqual({ found: true });
      expect(await task.unschedule('every-minute')).toEqual({ found: false });
    });

    it('makes exactly one run per slot with two consumers, keyed and triggered by the slot, never before it', async () => {
      await area.harness();
      const clock = manualClock(T0);
      const executed: string[] = [];
      const a = await consumer(clock, executed);
      await consumer(clock, executed, true);
      await a.task.schedule('tick', { cron: '* * * * *', query: { from: 'schedule' } });
      await sleep(50);
      expect(await runsOf(a.queue)).toEqual([]);
      for (let minute = 1; minute <= 3; minute++) {
        clock.set(T0 - 30_000 + minute * MINUTE);
        await waitFor(async () => (await runsOf(a.queue)).length === minute, `the run of slot ${minute}`);
        // The slot's run ends before the clock moves on: a lease still held when the clock jumps a minute expires.
        const ended = async () => (await runsOf(a.queue)).filter((run) => run.status === 'success').length === minute;
        await waitFor(ended, `the run of slot ${minute} to succeed`);
        await sleep(40);
      }
      const runs = await runsOf(a.queue);
      expect(runs).toHaveLength(3);
      const slots = runs.map((r) => (r.trigger as { at: string }).at).sort();
      expect(slots).toEqual(['2027-01-04T00:01:00.000Z', '2027-01-04T00:02:00.000Z', '2027-01-04T00:03:00.000Z']);
      for (const run of runs) {
        expect(run.trigger).toMatchObject({ schedule: 'tick' });
        expect(run.query).toEqual({ from: 'schedule' });
        expect(Date.parse(run.createdAt)).toBeGreaterThanOrEqual(Date.parse((run.trigger as { at: string }).at));
      }
      await waitFor(() => executed.length === 3, 'three executions');
      const listed = (await a.queue.operator.schedules.list()).items[0];
      expect(listed).toMatchObject({ lastSlotAt: '2027-01-04T00:03:00.000Z', nextAt: '2027-01-04T00:04:00.000Z' });
    });

    it('catches up missed slots by misfire policy: latest makes 1 run, skip 0, all one per slot', async () => {
      await area.harness();
      const clock = manualClock(T0);
      const producer = await area.open(area.h.store, definition, undefined, { runtime: { mode: 'producer' }, clock });
      for (const misfire of ['latest', 'skip', 'all'] as const) {
        await producer.task.schedule(misfire, { cron: '* * * * *', query: misfire, misfire });
      }
      // Nobody fires for ten minutes; then a consumer starts 15 s past the tenth slot.
      clock.set(T0 - 30_000 + 10 * MINUTE + 15_000);
      const executed: string[] = [];
      const c = await consumer(clock, executed);
      await waitFor(async () => {
        const { items } = await c.queue.operator.schedules.list();
        return items.every((s) => s.nextAt === '2027-01-04T00:11:00.000Z');
      }, 'every schedule moved on');
      const runs = await runsOf(c.queue);
      const count = (q: string) => runs.filter((r) => r.query === q).length;
      expect([count('latest'), count('skip'), count('all')]).toEqual([1, 0, 10]);
      const latest = runs.find((r) => r.query === 'latest');
      expect(latest?.trigger).toEqual({ schedule: 'latest', at: '2027-01-04T00:10:00.000Z' });
    });

    it("keeps an operator's pause when the schedule is declared again without enabled", async () => {
      await area.harness();
      const clock = manualClock(T0);
      const c = await consumer(clock, []);
      const { revision } = await c.task.schedule('kept', { cron: '* * * * *', query: null });
      const op = c.queue.operator.schedules;
      await op.pause({ id: 'kept', expectedRevision: revision, reason: 'quota', commandId: 'k-1' });
      // What every start-up does: the same declaration again.
      const again = await c.task.schedule('kept', { cron: '* * * * *', query: null });
      expect(again).toEqual({ scheduleId: 'kept', created: false, revision: revision + 1 });
      expect((await op.list()).items[0]?.enabled).toBe(false);
      const enabled = await c.task.schedule('kept', { cron: '* * * * *', query: null, enabled: true });
      expect(enabled.revision).toBe(revision + 2);
      expect((await op.list()).items[0]?.enabled).toBe(true);
    });

    it('pauses and resumes with revisions and command receipts; a paused schedule fires nothing', async () => {
      await area.harness();
      const clock = manualClock(T0);
      const executed: string[] = [];
      const c = await consumer(clock, executed);
      const { revision } = await c.task.schedule('held', { cron: '* * * * *', query: null });
      const op = c.queue.operator.schedules;
      const paused = await op.pause({
        id: 'held',
        expectedRevision: revision,
        reason: 'maintenance',
        commandId: 'p-1',
      });
      expect(paused).toEqual({ kind: 'applied', id: 'held', revision: revision + 1, enabled: false, changed: true });
      expect(
        await op.pause({ id: 'held', expectedRevision: revision, reason: 'maintenance', commandId: 'p-1' }),
      ).toEqual(paused);
      const conflict = await op
        .pause({ id: 'held', expectedRevision: revision, reason: 'other', commandId: 'p-1' })
        .catch((e: unknown) => e);
      expect(isDocketError(conflict, 'COMMAND_CONFLICT')).toBe(true);
      const stale = await op
        .resume({ id: 'held', expectedRevision: revision, reason: 'go', commandId: 'r-0' })
        .catch((e: unknown) => e);
      expect(isDocketError(stale, 'REVISION_CONFLICT')).toBe(true);
      clock.set(T0 + 5 * MINUTE);
      await sleep(60);
      expect(await runsOf(c.queue)).toEqual([]);
      const resumed = await op.resume({ id: 'held', expectedRevision: revision + 1, reason: 'go', commandId: 'r-1' });
      expect(resumed).toMatchObject({ kind: 'applied', enabled: true, revision: revision + 2 });
      // Resumed from its next slot after now: the slots of the pause are not caught up.
      expect((await op.list()).items[0]?.nextAt).toBe('2027-01-04T00:06:00.000Z');
      expect(await op.pause({ id: 'missing', expectedRevision: 1, reason: 'x', commandId: 'm-1' })).toEqual({
        kind: 'not_found',
        id: 'missing',
      });
      clock.set(T0 + 6 * MINUTE);
      await waitFor(async () => (await runsOf(c.queue)).length === 1, 'the first slot after the resume');
    });

    it('runs a schedule now from a queue that declares none of its tasks: once per command, listed with its slots', async () => {
      await area.harness();
      const clock = manualClock(T0);
      const executed: string[] = [];
      const c = await consumer(clock, executed);
      await c.task.schedule('nightly', { cron: '0 3 * * *', query: { n: 1 }, limits: { modelCalls: 2 } });
      await c.task.schedule('hourly', { cron: '0 * * * *', query: { n: 2 } });
      const before = (await c.queue.operator.schedules.list()).items;
      const bare = createQueue<Tx>({
        store: area.h.secondStore(),
        logger: false,
        runtime: { mode: 'producer' },
        clock,
      });
      area.track(bare);
      await bare.ready();
      const op = bare.operator.schedules;
      const cmd = { id: 'nightly', reason: 'backfill', commandId: 'now-1' };
      const first = await op.runNow(cmd);
      if (first.kind !== 'applied') throw new Error(`runNow answered ${first.kind}`);
      expect(await op.runNow(cmd)).toEqual(first);
      const conflict = await op.runNow({ ...cmd, reason: 'other' }).catch((e: unknown) => e);
      expect(isDocketError(conflict, 'COMMAND_CONFLICT')).toBe(true);
      expect(await op.runNow({ id: 'missing', reason: 'x', commandId: 'now-m' })).toEqual({
        kind: 'not_found',
        id: 'missing',
      });
      for (const bad of [
        { ...cmd, reason: '' },
        { ...cmd, id: 'no such id!' },
        { ...cmd, commandId: undefined },
      ]) {
        expect(isDocketError(await op.runNow(bad as never).catch((e: unknown) => e), 'CONFIG_INVALID')).toBe(true);
      }
      await waitFor(() => executed.includes(first.runId), 'the run started now');
      expect(await bare.operator.runs.get(first.runId)).toMatchObject({
        query: { n: 1 },
        trigger: { schedule: 'nightly' },
        limits: { modelCalls: { limit: 2 } },
      });
      expect((await bare.operator.runs.history(first.runId))[0]).toMatchObject({
        actor: 'operator',
        detail: { reason: 'backfill', commandId: 'now-1' },
      });
      expect((await op.list()).items).toEqual(before);
      clock.set(T0 + 4 * 60 * MINUTE);
      await waitFor(async () => (await runsOf(c.queue)).length === 3, 'the slots of both schedules');
      const ofSchedule = async (scheduleId: string) =>
        (await bare.operator.runs.list({ taskName: 'cron', scheduleId })).items.map((r) => r.runId);
      const nightly = await ofSchedule('nightly');
      expect(nightly).toHaveLength(2);
      expect(nightly).toContain(first.runId);
      expect(await ofSchedule('hourly')).toHaveLength(1);
      expect(await ofSchedule('never')).toEqual([]);
      const untasked = await bare.operator.runs.list({ scheduleId: 'nightly' }).catch((e: unknown) => e);
      expect(isDocketError(untasked, 'CONFIG_INVALID')).toBe(true);
    });
  });
}
