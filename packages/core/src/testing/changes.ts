import { expect, it } from 'vitest';
import type { HistoryEntry } from '../machine/run-types.js';
import type { Change } from '../runtime/operator/changes.js';
import type { Queue } from '../runtime/queue/create-queue.js';
import type { WatchedChange } from '../runtime/queue/watch.js';
import { isDocketError } from '../util/errors.js';
import { describeArea, type HarnessFactory, manualClock, sleep, waitFor, waitForStatus } from './harness.js';

/** Reads the whole feed after `after` in pages of `limit`, and the last `next`. */
async function readAll<Tx>(queue: Queue<Tx>, limit: number, after?: string, taskName?: string) {
  const items: Change[] = [];
  let next = after;
  // A feed that never runs dry within this many pages repeats itself: fail rather than loop.
  for (let pages = 0; pages < 1_000; pages++) {
    const page = await queue.operator.changes({
      limit,
      ...(next === undefined ? {} : { after: next }),
      ...(taskName ? { taskName } : {}),
    });
    items.push(...page.items);
    next = page.next;
    if (page.items.length < limit) return { items, next };
  }
  throw new Error('the feed gave 1,000 full pages: it repeats entries');
}

/** The feed's entries of one run, as history entries without detail. */
const entriesOf = (items: Change[], runId: string) =>
  items
    .filter((c) => c.runId === runId)
    .map(({ seq, from, to, reason, actor, at }) => ({ seq, from, to, reason, actor, at }));

/** The run's history without detail, for comparing with the feed. */
const plain = (history: HistoryEntry[]) =>
  history.map(({ seq, from, to, reason, actor, at }) => ({ seq, from, to, reason, actor, at }));

/** Error code of a rejected promise, or `null` when it resolved. */
async function codeOf(promise: Promise<unknown>): Promise<string | null> {
  try {
    await promise;
    return null;
  } catch (error) {
    return isDocketError(error) ? error.code : String(error);
  }
}

/** The changes feed (SPEC section 13): every history entry in commit order, paged by cursor, filtered, retained, watched. */
export function changesSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('changes', factory, (area) => {
    it("gives every history entry of the namespace once, in each run's seq order, across pages", async () => {
      const h = await area.harness();
      const { queue, task } = await area.open<number>(
        h.store,
        { name: 'feed', version: '1' },
        {
          execute: (ctx) => (ctx.page < 2 ? ctx.next(ctx.page + 1) : ctx.end()),
        },
      );
      const other = await area.open<number>(h.secondStore(), { name: 'feed', version: '1' }, undefined, {
        namespace: 'elsewhere',
        runtime: { mode: 'producer' },
      });
      const runs = await Promise.all([1, 2, 3, 4].map((q) => task.start({ query: q })));
      await other.task.start({ query: 9 });
      for (const run of runs) await waitForStatus(task, run.runId, 'success');
      const { items, next } = await readAll(queue, 3);
      for (const run of runs) {
        expect(entriesOf(items, run.runId)).toEqual(plain(await task.history(run.runId)));
      }
      expect(new Set(items.map((c) => c.runId))).toEqual(new Set(runs.map((r) => r.runId)));
      expect(items.every((c) => c.task.name === 'feed' && c.task.version === '1')).toBe(true);
      // No entry is new: the answer's cursor is the one given, and asking again gives nothing.
      const again = await queue.operator.changes({ after: next });
      expect(again).toEqual({ items: [], next });
      const more = await task.start({ query: 0 });
      await waitForStatus(task, more.runId, 'success');
      const after = await readAll(queue, 100, next);
      expect(entriesOf(after.items, more.runId)).toEqual(plain(await task.history(more.runId)));
      expect(after.items.every((c) => c.runId === more.runId)).toBe(true);
    });

    it('filters by task, binds a cursor to its feed, and refuses bad options', async () => {
      const h = await area.harness();
      const { queue, task } = await area.open(h.store, { name: 'a', version: '1' }, { execute: (ctx) => ctx.end() });
      const b = queue.operator;
      const run = await task.start({ query: 1 });
      await waitForStatus(task, run.runId, 'success');
      const onlyA = await b.changes({ taskName: 'a' });
      expect(onlyA.items.length).toBe((await task.history(run.runId)).length);
      expect((await b.changes({ taskName: 'nothing' })).items).toEqual([]);
      const all = await b.changes({ limit: 1 });
      expect(await codeOf(b.changes({ after: all.next, taskName: 'a' }))).toBe('CURSOR_INVALID');
      expect(await codeOf(b.changes({ after: `${all.next}x` }))).toBe('CURSOR_INVALID');
      expect(await codeOf(b.changes({ after: 'not-a-cursor' }))).toBe('CURSOR_INVALID');
      for (const limit of [0, 1001, 1.5]) expect(await codeOf(b.changes({ limit }))).toBe('CONFIG_INVALID');
      expect(await codeOf(b.changes({ since: 1 } as never))).toBe('CONFIG_INVALID');
      expect(await codeOf(b.changes({ taskName: '' }))).toBe('CONFIG_INVALID');
      expect(await codeOf(b.changes({ from: 'now', after: all.next }))).toBe('CONFIG_INVALID');
      // From now: no item, and a cursor after everything there is.
      const now = await b.changes({ from: 'now' });
      expect(now.items).toEqual([]);
      expect(await b.changes({ after: now.next })).toEqual({ items: [], next: now.next });
      expect((await b.changes({ limit: 1000 })).items.length).toBe(onlyA.items.length);
    });

    /** A queue of task `name` on a manual clock whose runs are kept a minute after they finish. */
    async function keptAMinute(name: string) {
      const h = await area.harness();
      const clock = manualClock();
      const opened = await area.open(
        h.store,
        { name, version: '1' },
        { execute: (ctx) => ctx.end() },
        { clock, retention: { runsMs: 60_000, deadLettersMs: 60_000 } },
      );
      return { ...opened, clock };
    }

    it('drops entries past retention and says CURSOR_EXPIRED to a cursor before them', async () => {
      const { queue, task, clock } = await keptAMinute('kept');
      const start = await queue.operator.changes({ limit: 1 });
      const old = await task.start({ query: 'old' });
      await waitForStatus(task, old.runId, 'success');
      const seen = await queue.operator.changes();
      clock.advance(61_000);
      const fresh = await task.start({ query: 'new' });
      await waitForStatus(task, fresh.runId, 'success');
      await queue.operator.maintenance.collect();
      expect(await codeOf(queue.operator.changes({ after: start.next }))).toBe('CURSOR_EXPIRED');
      // A cursor at or past the removed entries goes on.
      const onward = await readAll(queue, 2, seen.next);
      expect(entriesOf(onward.items, fresh.runId)).toEqual(plain(await task.history(fresh.runId)));
      const fromOldest = await readAll(queue, 100);
      expect(fromOldest.items.some((c) => c.runId === old.runId)).toBe(false);
      expect(entriesOf(fromOldest.items, fresh.runId)).toEqual(plain(await task.history(fresh.runId)));
    });

    it('never gives a position again once retention removed every entry, the newest too', async () => {
      const { queue, task, clock } = await keptAMinute('emptied');
      const old = await task.start({ query: 'old' });
      await waitForStatus(task, old.runId, 'success');
      const seen = await readAll(queue, 100);
      clock.advance(61_000);
      await queue.operator.maintenance.collect();
      expect((await queue.operator.changes()).items).toEqual([]);
      const fresh = await task.start({ query: 'new' });
      await waitForStatus(task, fresh.runId, 'success');
      const history = plain(await task.history(fresh.runId));
      expect(entriesOf((await readAll(queue, 2, seen.next)).items, fresh.runId)).toEqual(history);
      expect(entriesOf((await readAll(queue, 100)).items, fresh.runId)).toEqual(history);
    });

    it('watch yields new entries from this and another queue, resumes from a cursor, and ends on abort and close', async () => {
      const h = await area.harness();
      const { queue, task } = await area.open(h.store, { name: 'w', version: '1' }, { execute: (ctx) => ctx.end() });
      const producer = await area.open(h.secondStore(), { name: 'w', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      const controller = new AbortController();
      const seen: WatchedChange[] = [];
      const watching = (async () => {
        for await (const change of queue.watch({ signal: controller.signal })) seen.push(change);
      })();
      const mine = await task.start({ query: 1 });
      const theirs = await producer.task.start({ query: 2 });
      await waitFor(() => seen.filter((c) => c.to === 'success').length === 2, 'both runs watched to success');
      expect(entriesOf(seen, mine.runId)).toEqual(plain(await task.history(mine.runId)));
      expect(entriesOf(seen, theirs.runId)).toEqual(plain(await task.history(theirs.runId)));
      controller.abort();
      await watching;
      // Resuming from the first watched change's cursor gives everything after it, nothing before.
      const resumed = await readAll(queue, 100, seen[0]?.cursor);
      expect(resumed.items).toEqual(seen.slice(1).map(({ cursor: _c, ...change }) => change));
      expect(await codeOf((async () => queue.watch({ signal: 'x' as never }))())).toBe('CONFIG_INVALID');
      const open = (async () => {
        let n = 0;
        for await (const _ of queue.watch({ after: seen.at(-1)?.cursor })) n++;
        return n;
      })();
      await queue.close();
      expect(await open).toBe(0);
    });

    it("watch from 'now' skips what was there and yields only what comes after", async () => {
      const h = await area.harness();
      const { queue, task } = await area.open(h.store, { name: 'now', version: '1' }, { execute: (ctx) => ctx.end() });
      const before = await task.start({ query: 1 });
      await waitForStatus(task, before.runId, 'success');
      const controller = new AbortController();
      const seen: WatchedChange[] = [];
      const iterator = queue.watch({ from: 'now', signal: controller.signal, taskName: 'now' });
      const watching = (async () => {
        for await (const change of iterator) seen.push(change);
      })();
      await sleep(50);
      const after = await task.start({ query: 2 });
      await waitForStatus(task, after.runId, 'success');
      await waitFor(() => seen.some((c) => c.to === 'success'), 'the new run watched to success');
      controller.abort();
      await watching;
      expect(seen.every((c) => c.runId === after.runId)).toBe(true);
      expect(entriesOf(seen, after.runId)).toEqual(plain(await task.history(after.runId)));
      expect(await codeOf((async () => queue.watch({ from: 'later' as never }))())).toBe('CONFIG_INVALID');
      expect(await codeOf((async () => queue.watch({ from: 'now', after: seen[0]?.cursor }))())).toBe('CONFIG_INVALID');
    });

    it('a reader paging while two queues write sees every entry exactly once', async () => {
      const h = await area.harness();
      const one = await area.open(h.store, { name: 'busy', version: '1' }, { execute: (ctx) => ctx.end() });
      const two = await area.open(h.secondStore(), { name: 'busy', version: '1' }, { execute: (ctx) => ctx.end() });
      const items: Change[] = [];
      let next: string | undefined;
      let writing = true;
      const writers = (async () => {
        const started = [];
        for (let i = 0; i < 20; i++) started.push(await (i % 2 === 0 ? one : two).task.start({ query: i }));
        for (const run of started) await waitForStatus(one.task, run.runId, 'success');
        writing = false;
        return started;
      })();
      while (writing) {
        const page = await one.queue.operator.changes({ limit: 7, ...(next ? { after: next } : {}) });
        items.push(...page.items);
        next = page.next;
        await sleep(2);
      }
      const started = await writers;
      items.push(...(await readAll(one.queue, 7, next)).items);
      const keys = items.map((c) => `${c.runId}:${c.seq}`);
      expect(new Set(keys).size).toBe(keys.length);
      for (const run of started) expect(entriesOf(items, run.runId)).toEqual(plain(await one.task.history(run.runId)));
    });
  });
}
