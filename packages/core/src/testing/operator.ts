import { expect, it } from 'vitest';
import type { RunInfo } from '../machine/run-types.js';
import { isDocketError } from '../util/errors.js';
import { describeArea, type HarnessFactory, manualClock, sleep, waitForStatus } from './harness.js';

/** The operator API: listing with cursors, pause/resume/cancel with revisions and command receipts. */
export function operatorSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('operator', factory, (area) => {
    async function producer(name = 'ops') {
      const opened = await area.open(area.h.store, { name, version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      return opened;
    }

    it('lists runs newest first by task and status, without payloads unless asked, and refuses edited or foreign cursors', async () => {
      await area.harness();
      const a = await producer('list-a');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await a.task.start({ query: i })).runId);
      await a.task.cancel(ids[1]!);
      const op = a.queue.operator;
      const newest = [...ids].reverse();
      const first = await op.runs.list({ taskName: 'list-a', limit: 2 });
      expect(first.items.map((r) => r.runId)).toEqual(newest.slice(0, 2));
      expect(first.items[0]).not.toHaveProperty('query');
      expect(first.items[0]).not.toHaveProperty('state');
      const second = await op.runs.list({ taskName: 'list-a', limit: 2, cursor: first.nextCursor! });
      expect(second.items.map((r) => r.runId)).toEqual(newest.slice(2, 4));
      const third = await op.runs.list({ taskName: 'list-a', limit: 2, cursor: second.nextCursor! });
      expect(third).toMatchObject({ nextCursor: null });
      expect(third.items.map((r) => r.runId)).toEqual([newest[4]]);
      const withPayloads = await op.runs.list({ taskName: 'list-a', limit: 1, payloads: true });
      expect(withPayloads.items[0]).toMatchObject({ runId: newest[0], query: 4, state: null });
      const cancelled = await op.runs.list({ status: 'cancelled' });
      expect(cancelled.items.map((r) => r.runId)).toEqual([ids[1]]);
      // An edited cursor: the same fields with the id moved, the check sum left as it was.
      const fields = JSON.parse(Buffer.from(first.nextCursor!, 'base64url').toString('utf8'));
      const edited = Buffer.from(JSON.stringify({ ...fields, b: newest[0] })).toString('base64url');
      for (const cursor of ['nonsense', first.nextCursor!, edited]) {
        const filter = cursor === edited ? { taskName: 'list-a' } : { status: 'pending' as const };
        const error = await op.runs.list({ ...filter, cursor }).catch((e: unknown) => e);
        expect(isDocketError(error, 'CURSOR_INVALID')).toBe(true);
      }
      const other = await area.open(area.h.store, { name: 'list-a', version: '1' }, undefined, {
        namespace: 'elsewhere',
        runtime: { mode: 'producer' },
      });
      const foreign = await other.queue.operator.runs
        .list({ taskName: 'list-a', cursor: first.nextCursor! })
        .catch((e: unknown) => e);
      expect(isDocketError(foreign, 'CURSOR_INVALID')).toBe(true);
      const bad = await op.runs.list({ limit: 500 }).catch((e: unknown) => e);
      expect(isDocketError(bad, 'CONFIG_INVALID')).toBe(true);
    });

    it('a listed run shows every field runs.get shows but its payloads, and both with payloads', async () => {
      await area.harness();
      const a = await producer('listed');
      const at = new Date(Date.now() + 3_600_000);
      await a.task.start({ query: { n: 1 }, idempotencyKey: 'k-1', priority: 7, group: 'tenant-a' });
      await a.task.start({ query: { n: 2 }, trigger: { at }, limits: { modelCalls: 3, deadlineAt: at } });
      await a.task.start({ query: { n: 3 }, trigger: { event: 'paid', match: { order: 3 } } });
      const cancelled = await a.task.start({ query: { n: 4 }, group: 'tenant-b', priority: -2 });
      await a.task.cancel(cancelled.runId);
      const op = a.queue.operator;
      const [bare, full] = [
        await op.runs.list({ taskName: 'listed' }),
        await op.runs.list({ taskName: 'listed', payloads: true }),
      ];
      expect(bare.items).toHaveLength(4);
      for (const [i, item] of bare.items.entries()) {
        const info = (await op.runs.get(item.runId)) as RunInfo;
        const { query, state, ...shown } = info;
        expect(item).toEqual(shown);
        expect(full.items[i]).toEqual(info);
        expect([query, state]).toEqual([{ n: 4 - i }, null]);
      }
    });

    it('finds a run by its idempotency key, and lists runs created in a time range', async () => {
      await area.harness();
      const clock = manualClock(Date.parse('2026-03-01T10:00:00.000Z'));
      const opened = await area.open(area.h.store, { name: 'found', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
        clock,
      });
      const early = await opened.task.start({ query: 1, idempotencyKey: 'order-17' });
      clock.advance(60_000);
      const middle = await opened.task.start({ query: 2, idempotencyKey: 'order-18' });
      clock.advance(60_000);
      const late = await opened.task.start({ query: 3 });
      const list = (options: object) =>
        opened.queue.operator.runs.list(options).then((r) => r.items.map((i) => i.runId));
      expect(await list({ taskName: 'found', idempotencyKey: 'order-18' })).toEqual([middle.runId]);
      expect(await list({ taskName: 'found', idempotencyKey: 'nothing' })).toEqual([]);
      const noTask = await opened.queue.operator.runs.list({ idempotencyKey: 'order-17' }).catch((e: unknown) => e);
      expect(isDocketError(noTask, 'CONFIG_INVALID')).toBe(true);
      expect(await list({ createdFrom: '2026-03-01T10:01:00.000Z' })).toEqual([late.runId, middle.runId]);
      expect(await list({ createdTo: '2026-03-01T10:01:00.000Z' })).toEqual([early.runId]);
      const window = { createdFrom: '2026-03-01T10:00:30.000Z', createdTo: '2026-03-01T10:01:30.000Z' };
      expect(await list(window)).toEqual([middle.runId]);
      const paged = await opened.queue.operator.runs.list({ createdFrom: '2026-03-01T10:00:00.000Z', limit: 2 });
      expect(paged.items.map((i) => i.runId)).toEqual([late.runId, middle.runId]);
      const rest = await opened.queue.operator.runs.list({
        createdFrom: '2026-03-01T10:00:00.000Z',
        limit: 2,
        cursor: paged.nextCursor as string,
      });
      expect(rest.items.map((i) => i.runId)).toEqual([early.runId]);
      const bad = await opened.queue.operator.runs.list({ createdFrom: 'yesterday' }).catch((e: unknown) => e);
      expect(isDocketError(bad, 'CONFIG_INVALID')).toBe(true);
    });

    it('pauses a run that waits for its time or event; resumed, it waits for its trigger again', async () => {
      await area.harness();
      const { task, queue } = await producer('delayed');
      const op = queue.operator;
      const later = new Date(Date.now() + 3_600_000);
      const timed = await task.start({ query: 'timed', trigger: { at: later } });
      const evented = await task.start({ query: 'evented', trigger: { event: 'approved' } });
      for (const { runId } of [timed, evented]) {
        const paused = await op.runs.pause({ runId, expectedRevision: 1, reason: 'hold', commandId: `p-${runId}` });
        expect(paused).toEqual({ kind: 'applied', runId, revision: 2, status: 'paused', changed: true });
        const resumed = await op.runs.resume({ runId, expectedRevision: 2, reason: 'go', commandId: `r-${runId}` });
        expect(resumed).toMatchObject({ kind: 'applied', status: 'waiting', revision: 3, changed: true });
      }
      expect((await task.get(timed.runId))?.dueAt).toBe(later.toISOString());
      // The event run still takes its event, and only then becomes pending.
      expect(await queue.events.deliver(evented.runId, { id: 'e-1', type: 'approved' })).toMatchObject({
        accepted: true,
        status: 'pending',
      });
    });

    it('pauses, resumes and cancels with expectedRevision, and answers a reused commandId with its first result', async () => {
      await area.harness();
      const { task, queue } = await producer();
      const op = queue.operator;
      const { runId } = await task.start({ query: null });
      const paused = await op.runs.pause({ runId, expectedRevision: 1, reason: 'investigate', commandId: 'c1' });
      expect(paused).toEqual({ kind: 'applied', runId, revision: 2, status: 'paused', changed: true });
      expect(await op.runs.pause({ runId, expectedRevision: 1, reason: 'investigate', commandId: 'c1' })).toEqual(
        paused,
      );
      const conflict = await op.runs
        .pause({ runId, expectedRevision: 1, reason: 'other text', commandId: 'c1' })
        .catch((e: unknown) => e);
      expect(isDocketError(conflict, 'COMMAND_CONFLICT')).toBe(true);
      const stale = await op.runs
        .resume({ runId, expectedRevision: 1, reason: 'go', commandId: 'c2' })
        .catch((e: unknown) => e);
      expect(isDocketError(stale, 'REVISION_CONFLICT')).toBe(true);
      expect(await op.runs.resume({ runId, expectedRevision: 2, reason: 'go', commandId: 'c2' })).toMatchObject({
        kind: 'applied',
        status: 'pending',
        revision: 3,
      });
      expect(await op.runs.resume({ runId, expectedRevision: 3, reason: 'again', commandId: 'c3' })).toMatchObject({
        kind: 'noop',
        changed: false,
      });
      const cancelled = await op.runs.cancel({ runId, expectedRevision: 3, reason: 'wrong release', commandId: 'c4' });
      expect(cancelled).toMatchObject({ kind: 'applied', status: 'cancelled', revision: 4 });
      expect(await op.runs.cancel({ runId, expectedRevision: 4, reason: 'again', commandId: 'c5' })).toMatchObject({
        kind: 'noop',
        status: 'cancelled',
      });
      const last = (await task.history(runId)).at(-1);
      expect(last).toMatchObject({ reason: 'OPERATOR_STOP', actor: 'operator', detail: { reason: 'wrong release' } });
      expect(
        await op.runs.cancel({ runId: 'd'.repeat(32), expectedRevision: 1, reason: 'x', commandId: 'c6' }),
      ).toEqual({
        kind: 'not_found',
        runId: 'd'.repeat(32),
      });
      for (const bad of [
        { runId, expectedRevision: 0, reason: 'x', commandId: 'c7' },
        { runId, expectedRevision: 4, reason: '', commandId: 'c7' },
        { runId, expectedRevision: 4, reason: 'x', commandId: 'c'.repeat(129) },
        { runId, expectedRevision: 4, reason: 'x'.repeat(1025), commandId: 'c7' },
      ]) {
        const error = await op.runs.pause(bad).catch((e: unknown) => e);
        expect(isDocketError(error, 'CONFIG_INVALID')).toBe(true);
      }
    });

    it('pauses a running page to pausing, which becomes paused when the page settles; resume continues it', async () => {
      await area.harness();
      let release!: () => void;
      let gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const opened = await area.open(
        area.h.store,
        { name: 'pausable', version: '1' },
        {
          async execute(ctx) {
            await gate;
            return ctx.page < 2 ? ctx.next({ p: 1 }) : ctx.end();
          },
        },
      );
      const op = opened.queue.operator;
      const { runId } = await opened.task.start({ query: null });
      const running = await waitForStatus(opened.task, runId, 'running');
      const pausing = await op.runs.pause({
        runId,
        expectedRevision: running.revision,
        reason: 'hold',
        commandId: 'p1',
      });
      expect(pausing).toMatchObject({ status: 'pausing' });
      release();
      const paused = await waitForStatus(opened.task, runId, 'paused');
      expect(paused).toMatchObject({ page: 2, reason: 'PAUSED' });
      await sleep(40);
      expect((await opened.task.get(runId))?.status).toBe('paused');
      gate = Promise.resolve();
      await op.runs.resume({ runId, expectedRevision: paused.revision, reason: 'go on', commandId: 'p2' });
      await waitForStatus(opened.task, runId, 'success');
    });

    it('reports health ready for a ready queue and unavailable after close', async () => {
      await area.harness();
      const { queue } = await producer();
      expect(await queue.operator.health()).toEqual({ status: 'ready', reasons: [] });
      await queue.close();
      const health = await queue.operator.health();
      expect(health.status).toBe('unavailable');
    });
  });
}
