import { expect, it } from 'vitest';
import type { HistoryEntry } from '../machine/run-types.js';
import type { TaskHandlers } from '../runtime/task/handlers.js';
import type { Json } from '../util/json.js';
import { RetryAfterError } from '../util/retry-errors.js';
import { workerClaim } from './claim-request.js';
import { describeArea, type HarnessFactory, manualClock, sleep, waitFor, waitForStatus } from './harness.js';

/** Claim times (ms) of runs, from their `CLAIMED` history entries. */
function claimTimes(histories: readonly HistoryEntry[][]): number[] {
  return histories
    .flat()
    .filter((entry) => entry.reason === 'CLAIMED')
    .map((entry) => Date.parse(entry.at))
    .sort((a, b) => a - b);
}

/** The most claims in any window `[t, t + perMs)`. */
function mostInWindow(times: readonly number[], perMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while ((times[i] as number) - (times[j] as number) >= perMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Counts pages in flight, overall and per group, and remembers the peaks. */
function inFlight() {
  const groups = new Map<string, number>();
  const peak = { all: 0, perGroup: 0, groupsAtOnce: 0 };
  let all = 0;
  return {
    peak,
    enter(group: string) {
      all++;
      groups.set(group, (groups.get(group) ?? 0) + 1);
      peak.all = Math.max(peak.all, all);
      peak.perGroup = Math.max(peak.perGroup, groups.get(group) as number);
      peak.groupsAtOnce = Math.max(peak.groupsAtOnce, [...groups.values()].filter((n) => n > 0).length);
    },
    leave(group: string) {
      all--;
      groups.set(group, (groups.get(group) as number) - 1);
    },
  };
}

/** Flow control: fleet-wide concurrency, rates, groups, holds and paused tasks, with two consumers on one store. */
export function flowSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('flow', factory, (area) => {
    /** Opens two consumers (two store objects) of one task with the given flow and a page of `pageMs`. */
    async function twoConsumers(flow: Json, pageMs: number, counter = inFlight()) {
      const h = await area.harness();
      const definition = { name: 'limited', version: '1', flow: flow as never };
      const handlers: TaskHandlers<Json, Json, Tx> = {
        async execute(ctx) {
          const group = String((ctx.query as { group?: string } | null)?.group ?? '');
          counter.enter(group);
          await sleep(pageMs);
          counter.leave(group);
          return ctx.end();
        },
      };
      const a = await area.open(h.store, definition, handlers, { runtime: { workerId: 'a', concurrency: 4 } });
      await area.open(h.secondStore(), definition, handlers, { runtime: { workerId: 'b', concurrency: 4 } });
      return { h, task: a.task, queue: a.queue, counter };
    }

    it('never leases more runs of a task than flow.concurrency across two consumers, and reaches it', async () => {
      const { task, counter } = await twoConsumers({ concurrency: 2 }, 25);
      const runs = await Promise.all(Array.from({ length: 12 }, (_, i) => task.start({ query: { i } })));
      for (const { runId } of runs) await waitForStatus(task, runId, 'success');
      expect(counter.peak.all).toBe(2);
    });

    it('holds each group to flow.group.concurrency while several groups run at once', async () => {
      const { task, counter } = await twoConsumers({ group: { concurrency: 1 } }, 25);
      const inputs = Array.from({ length: 12 }, (_, i) => ({ query: { group: `g${i % 4}` }, group: `g${i % 4}` }));
      const runs = await task.startMany(inputs);
      for (const { runId } of runs) await waitForStatus(task, runId, 'success');
      expect(counter.peak.perGroup).toBe(1);
      expect(counter.peak.groupsAtOnce).toBeGreaterThan(1);
    });

    it('claims at most rate.max runs in any window of rate.perMs', async () => {
      const { h, task } = await twoConsumers({ rate: { max: 3, perMs: 300 } }, 1);
      const runs = await Promise.all(Array.from({ length: 9 }, (_, i) => task.start({ query: { i } })));
      for (const { runId } of runs) await waitForStatus(task, runId, 'success');
      const histories = await Promise.all(runs.map(({ runId }) => h.store.getHistory('default', runId)));
      const times = claimTimes(histories);
      expect(times).toHaveLength(9);
      expect(mostInWindow(times, 300)).toBeLessThanOrEqual(3);
    });

    it('a claim whose clock is behind a later claimer still counts the claims in its window', async () => {
      const h = await area.harness();
      const definition = { name: 'paced', version: '1', flow: { rate: { max: 2, perMs: 250 } } };
      const { task } = await area.open(h.store, definition, undefined, { runtime: { mode: 'producer' } });
      const claim = (now: number) => h.store.claimDue(workerClaim([{ name: 'paced', version: '1' }], 8, now).request);
      const t = Date.now() + 1000;
      await task.startMany([1, 2, 3, 4].map((i) => ({ query: { i } })));
      expect(await claim(t)).toHaveLength(2);
      expect(await claim(t + 340)).toHaveLength(2);
      // Nothing due: a claim by a process whose clock is ahead claims nothing, and keeps what others must count.
      expect(await claim(t + 700)).toHaveLength(0);
      await task.startMany([5, 6].map((i) => ({ query: { i } })));
      // A process whose clock read t + 400 before it took the lock: the two claims at t + 340 are in its window.
      expect(await claim(t + 400)).toHaveLength(0);
      expect(await claim(t + 589)).toHaveLength(0);
      expect(await claim(t + 590)).toHaveLength(2);
    });

    it('a claim filled by its first groups leaves the groups after them to the next claim', async () => {
      const h = await area.harness();
      const definition = { name: 'spread', version: '1', flow: { group: { concurrency: 5 } } };
      const { task } = await area.open(h.store, definition, undefined, { runtime: { mode: 'producer' } });
      const claim = (limit: number, now: number) =>
        h.store.claimDue(workerClaim([{ name: 'spread', version: '1' }], limit, now).request);
      await task.startMany(Array.from({ length: 20 }, (_, i) => ({ query: { i }, group: `g${i}` })));
      const t = Date.now() + 1000;
      expect(await claim(5, t)).toHaveLength(5);
      // Within a second: a store that keeps its group list must still hold the groups the first claim did not reach.
      const rest = await claim(20, t + 1);
      expect(rest).toHaveLength(15);
      expect(new Set(rest.map((run) => run.group)).size).toBe(15);
    });

    it('takes the least recently claimed group first, and among groups never claimed the one whose run came first', async () => {
      const h = await area.harness();
      const definition = { name: 'turns', version: '1', flow: { group: { concurrency: 5 } } };
      const { task } = await area.open(h.store, definition, undefined, { runtime: { mode: 'producer' } });
      const claim = async (now: number) =>
        (await h.store.claimDue(workerClaim([{ name: 'turns', version: '1' }], 1, now).request)).map(
          (run) => run.group,
        );
      // Started in this order, so the group keys' order ('a', 'm', 'z') is not the order of their first runs.
      await task.startMany(['z', 'a', 'm', 'z'].map((group, i) => ({ query: { i }, group })));
      const t = Date.now() + 1000;
      expect(await claim(t)).toEqual(['z']);
      // 'z' was claimed: the groups never claimed go before it, in the order of their runs.
      expect(await claim(t + 1)).toEqual(['a']);
      expect(await claim(t + 2)).toEqual(['m']);
      expect(await claim(t + 3)).toEqual(['z']);
    });

    it("collect forgets a group's last claim before retention's cutoff: the group goes in turn as one never claimed", async () => {
      const h = await area.harness();
      const definition = { name: 'idle', version: '1', flow: { group: { concurrency: 5 } } };
      const { task } = await area.open(h.store, definition, undefined, { runtime: { mode: 'producer' } });
      const claim = async (now: number) =>
        (await h.store.claimDue(workerClaim([{ name: 'idle', version: '1' }], 1, now).request)).map((run) => run.group);
      const collect = (runsBefore: number) =>
        h.store.collect({ namespace: 'default', runsBefore, deadLettersBefore: 0, limit: 100, after: null });
      await task.startMany(['z', 'z', 'z', 'a'].map((group, i) => ({ query: { i }, group })));
      const t = Date.now() + 1000;
      expect(await claim(t)).toEqual(['z']);
      // Claimed before the cutoff, 'z' is forgotten: its next run was started before 'a''s, so it goes first again.
      await collect(t + 1);
      expect(await claim(t + 2000)).toEqual(['z']);
      // Claimed at the cutoff, 'z' is kept: 'a', never claimed, goes before it although its run came later.
      await collect(t + 2000);
      expect(await claim(t + 4000)).toEqual(['a']);
    });

    it('collect forgets claims no rate counts any longer: those before its cutoff less a day and a minute', async () => {
      const h = await area.harness();
      const rate = { max: 1, perMs: 60_000 };
      const definition = { name: 'spent', version: '1', flow: { rate, group: { rate } } };
      const { task } = await area.open(h.store, definition, undefined, { runtime: { mode: 'producer' } });
      const claim = async (now: number) =>
        (await h.store.claimDue(workerClaim([{ name: 'spent', version: '1' }], 1, now).request)).length;
      const collect = (runsBefore: number) =>
        h.store.collect({ namespace: 'default', runsBefore, deadLettersBefore: 0, limit: 100, after: null });
      await task.startMany([1, 2].map((i) => ({ query: { i } })));
      const t = Date.now() + 1000;
      expect(await claim(t)).toBe(1);
      expect(await claim(t + 1)).toBe(0);
      // The longest window is a day, and claims are kept a minute past it: a claim at the cutoff less both is kept.
      const dayAndMinute = 86_400_000 + 60_000;
      await collect(t + dayAndMinute);
      expect(await claim(t + 2)).toBe(0);
      // Before it, the task's and the group's claims are gone (a test's cutoff ahead of the claims, to see them go).
      await collect(t + dayAndMinute + 1);
      expect(await claim(t + 3)).toBe(1);
    });

    it('a group at its rate never holds back another group', async () => {
      const { task } = await twoConsumers({ group: { rate: { max: 1, perMs: 60_000 } } }, 1);
      const first = await task.startMany([
        { query: { group: 'slow' }, group: 'slow' },
        { query: { group: 'slow' }, group: 'slow' },
      ]);
      const other = await task.start({ query: { group: 'other' }, group: 'other' });
      await waitForStatus(task, other.runId, 'success');
      // The slow group's one claim a minute went to one of its runs (its page may still be ending); the other waits.
      const slow = () => Promise.all(first.map(({ runId }) => task.get(runId)));
      await waitFor(async () => (await slow()).some((run) => run?.status === 'success'), 'the slow group to run one');
      expect((await slow()).map((run) => run?.status).sort()).toEqual(['pending', 'success']);
    });

    it("a RetryAfterError with hold: 'task' holds every run of the task, without consuming an attempt", async () => {
      const h = await area.harness();
      const claimedAt: number[] = [];
      let thrownAt: number | null = null;
      const { task } = await area.open(
        h.store,
        { name: 'held', version: '1' },
        {
          execute(ctx) {
            claimedAt.push(Date.now());
            if (thrownAt === null) {
              thrownAt = Date.now();
              throw new RetryAfterError('429 from the provider', { retryAfterMs: 400, hold: 'task' });
            }
            return ctx.end();
          },
        },
      );
      const first = await task.start({ query: 0 });
      await waitForStatus(task, first.runId, 'retrying');
      const held = await task.get(first.runId);
      expect(held).toMatchObject({ reason: 'RATE_LIMITED', attempt: 1, rateLimited: 1, businessFailures: 0 });
      const second = await task.start({ query: 1 });
      await waitForStatus(task, second.runId, 'success');
      await waitForStatus(task, first.runId, 'success');
      // The second run, due at once, waited for the task's hold: 400 ms from the settle, which came after the throw.
      expect(claimedAt[1]).toBeGreaterThanOrEqual((thrownAt ?? Number.POSITIVE_INFINITY) + 400);
    });

    it("a RetryAfterError with hold: 'group' holds that group only; a group started meanwhile runs", async () => {
      const h = await area.harness();
      // The hold is kept in the queue's time: a manual clock ends it when the test says, never by waiting.
      const clock = manualClock();
      const claimed: { group: string; at: number }[] = [];
      const { task } = await area.open(
        h.store,
        { name: 'grouped', version: '1', flow: { group: { concurrency: 5 } } },
        {
          execute(ctx) {
            const group = String((ctx.query as { group: string }).group);
            claimed.push({ group, at: clock.now() });
            if (group === 'held' && claimed.length === 1) {
              throw new RetryAfterError('429 for this key', { retryAfterMs: 2000, hold: 'group' });
            }
            return ctx.end();
          },
        },
        { clock },
      );
      const first = await task.start({ query: { group: 'held' }, group: 'held' });
      await waitForStatus(task, first.runId, 'retrying');
      const heldAt = clock.now();
      const second = await task.start({ query: { group: 'held' }, group: 'held' });
      const free = await task.start({ query: { group: 'free' }, group: 'free' });
      await waitForStatus(task, free.runId, 'success');
      await sleep(50);
      expect((await task.get(second.runId))?.status).toBe('pending');
      clock.advance(2000);
      await waitForStatus(task, second.runId, 'success');
      await waitForStatus(task, first.runId, 'success');
      const heldClaims = claimed.filter((c) => c.group === 'held').slice(1);
      expect(heldClaims).toHaveLength(2);
      expect(heldClaims.every((c) => c.at >= heldAt + 2000)).toBe(true);
    });

    it('a paused task accepts starts and runs nothing until resumed, while another task runs', async () => {
      const h = await area.harness();
      const { queue, task } = await area.open(
        h.store,
        { name: 'pausable', version: '1' },
        {
          execute: (ctx) => ctx.end(),
        },
      );
      const other = await area.open(h.secondStore(), { name: 'other', version: '1' }, { execute: (ctx) => ctx.end() });
      const [listed] = (await queue.operator.tasks.list()).filter((t) => t.name === 'pausable');
      expect(listed).toMatchObject({ name: 'pausable', versions: ['1'], paused: false, revision: 1, flow: null });
      const pause = { task: 'pausable', expectedRevision: 1, reason: 'provider outage', commandId: 'pause-1' };
      expect(await queue.operator.tasks.pause(pause)).toEqual({
        kind: 'applied',
        task: 'pausable',
        revision: 2,
        paused: true,
        changed: true,
      });
      expect(await queue.operator.tasks.pause(pause)).toMatchObject({ kind: 'applied', revision: 2 });
      const runs = await Promise.all(Array.from({ length: 5 }, (_, i) => task.start({ query: i })));
      const elsewhere = await other.task.start({ query: 'x' });
      await waitForStatus(other.task, elsewhere.runId, 'success');
      await sleep(100);
      for (const { runId } of runs) expect((await task.get(runId))?.status).toBe('pending');
      await expect(
        queue.operator.tasks.resume({ task: 'pausable', expectedRevision: 1, reason: 'back', commandId: 'r-0' }),
      ).rejects.toMatchObject({ code: 'REVISION_CONFLICT' });
      const resume = { task: 'pausable', expectedRevision: 2, reason: 'back', commandId: 'resume-1' };
      expect(await queue.operator.tasks.resume(resume)).toMatchObject({ kind: 'applied', revision: 3, paused: false });
      for (const { runId } of runs) await waitForStatus(task, runId, 'success');
      expect(
        await queue.operator.tasks.resume({ task: 'pausable', expectedRevision: 3, reason: 'again', commandId: 'r-2' }),
      ).toMatchObject({ kind: 'noop', revision: 3, paused: false, changed: false });
      expect(
        await queue.operator.tasks.pause({ task: 'nothing', expectedRevision: 1, reason: 'x', commandId: 'p-x' }),
      ).toEqual({ kind: 'not_found', task: 'nothing' });
    });

    it('keeps the group on the run, lists by group, and shows the flow limits', async () => {
      const h = await area.harness();
      const flow = { concurrency: 5, rate: { max: 10, perMs: 1000 }, group: { concurrency: 2 } };
      const { queue, task } = await area.open(h.store, { name: 'grouped', version: '1', flow }, undefined, {
        runtime: { mode: 'producer' },
      });
      const a = await task.start({ query: 1, group: 'tenant-a' });
      const [b] = await task.startMany([{ query: 2, group: 'tenant-b' }]);
      const none = await task.start({ query: 3 });
      expect((await task.get(a.runId))?.group).toBe('tenant-a');
      expect((await task.get(none.runId))?.group).toBeNull();
      const listed = await queue.operator.runs.list({ group: 'tenant-b' });
      expect(listed.items.map((item) => item.runId)).toEqual([b?.runId]);
      const [info] = await queue.operator.tasks.list();
      expect(info).toMatchObject({ name: 'grouped', flow, paused: false });
      expect(info?.byStatus.pending).toBe(3);
    });
  });
}
