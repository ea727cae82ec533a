import { join } from 'node:path';
import { createQueue, isDocketError, type Queue } from '@docket/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.js';
import { FEED_WINDOW } from '../src/sql/changes.js';
import { tempDir } from './helpers.js';

// The feed has no index beside its rowid: a read looks at a window of positions and keeps its namespace's rows.
// Here namespace `a` has one entry, then 2.5 windows of namespace `b`'s entries, then one more.
describe('the SQLite changes feed across windows of other namespaces', () => {
  const cleanups: (() => unknown)[] = [];
  let a: Queue;
  let b: Queue;
  let taskA: ReturnType<Queue['define']>;
  let first: string;
  let last: string;
  let filename: string;

  beforeAll(async () => {
    const dir = tempDir();
    cleanups.push(dir.remove);
    filename = join(dir.dir, 'feed.sqlite');
    // A poll a minute apart: a watch that waited for one between windows would not end within the test's time.
    const open = (namespace: string) => {
      const queue = createQueue({
        store: sqliteStore({ filename }),
        namespace,
        logger: false,
        runtime: { mode: 'producer' },
        protocol: { pollMs: 60_000 },
      });
      cleanups.push(() => queue.close());
      return queue;
    };
    a = open('a');
    b = open('b');
    taskA = a.define({ name: 'ta', version: '1' });
    const taskB = b.define({ name: 'tb', version: '1' });
    await a.ready();
    await b.ready();
    first = (await taskA.start({ query: 1 })).runId;
    for (let i = 0; i < (FEED_WINDOW * 2.5) / 1000; i++) {
      await taskB.startMany(Array.from({ length: 1000 }, (_, j) => ({ query: j })));
    }
    last = (await taskA.start({ query: 2 })).runId;
  }, 60_000);

  afterAll(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  it('pages past the other namespace window by window, each read bounded, and answers only its own entries', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    let reads = 0;
    while (!seen.includes(last)) {
      const page = await a.operator.changes({ limit: 10, ...(after ? { after } : {}) });
      seen.push(...page.items.map((c) => c.runId));
      expect(page.next).not.toBe(after);
      after = page.next;
      reads++;
      expect(reads).toBeLessThanOrEqual(4);
    }
    expect(seen).toEqual([first, last]);
    const caughtUp = await a.operator.changes({ after: after as string });
    expect(caughtUp).toEqual({ items: [], next: after });
  });

  it('watches past the windows without waiting for a poll between them', async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    for await (const change of a.watch({ signal: controller.signal })) {
      seen.push(change.runId);
      if (change.runId === last) controller.abort();
    }
    expect(seen).toEqual([first, last]);
  });

  /** The run ids of namespace `a`'s entries after `after`, paging window by window until the feed's end. */
  async function runIdsOfA(after?: string): Promise<string[]> {
    const ids: string[] = [];
    let next = after;
    for (let pages = 0; pages < 20; pages++) {
      const page = await a.operator.changes({ limit: 100, ...(next ? { after: next } : {}) });
      ids.push(...page.items.map((c) => c.runId));
      if (page.next === next) return ids;
      next = page.next;
    }
    throw new Error('the feed did not end within 20 pages');
  }

  it("trims its namespace's old entries across the windows, leaves the other namespace's, and keeps the newest", async () => {
    const cursor = (await a.operator.changes({ limit: 1 })).next;
    const store = sqliteStore({ filename });
    await store.open();
    cleanups.push(() => store.close());
    const before = Date.now() + 86_400_000;
    // `last`'s entry is the newest of the file: removing it would give its position to the next entry.
    expect(await store.trimChanges({ namespace: 'a', before, limit: 1_000 })).toBe(1);
    expect(await store.trimChanges({ namespace: 'a', before, limit: 1_000 })).toBe(0);
    expect(await runIdsOfA()).toEqual([last]);
    expect(await runIdsOfA(cursor)).toEqual([last]);
    expect((await b.operator.changes({ limit: 100 })).items).toHaveLength(100);
    // Once a newer entry exists, the next trim takes `last`'s, and the next entry still comes after every cursor.
    const newer = (await taskA.start({ query: 3 })).runId;
    expect(await store.trimChanges({ namespace: 'a', before, limit: 1_000 })).toBe(1);
    const expired = await a.operator.changes({ after: cursor }).catch((e: unknown) => e);
    expect(isDocketError(expired, 'CURSOR_EXPIRED')).toBe(true);
    expect(await runIdsOfA()).toEqual([newer]);
  });
});
