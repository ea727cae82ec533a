import { createQueue } from '@docket/core';
import { workerClaim } from '@docket/core/conformance';
import type { TaskKey } from '@docket/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import { flowStatements } from '../src/flow/statements.js';
import { sqliteStore } from '../src/index.js';
import { fileStore } from './helpers.js';

const task: TaskKey = { name: 'rated', version: '1' };

describe("the claims a rate counts are forgotten a minute past the rate's window (a real SQLite file)", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("deletes a scope's old claims as one range of the time index, not by reading every group's claims", async () => {
    const { db, store } = fileStore(cleanups);
    await store.open();
    cleanups.push(() => store.close());
    const { pruneClaims, groupClaimsSince } = flowStatements(db);
    const plan = (statement: { source: string }, ...params: unknown[]) =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${statement.source}`)
        .all(...params)
        .map((row) => (row as { detail: string }).detail);
    expect(plan(pruneClaims, 'default', 'rated', 'group', 0)).toEqual([
      'SEARCH docket_flow_claims USING INDEX docket_flow_claims_at (namespace=? AND task_name=? AND scope=? AND at<?)',
    ]);
    // A group's claims in the window stay one range of the primary key, which puts the group first.
    expect(plan(groupClaimsSince, 'default', 'rated', 'g', 0)).toEqual([
      'SEARCH docket_flow_claims USING INDEX sqlite_autoindex_docket_flow_claims_1 (namespace=? AND task_name=? AND scope=? AND group_key=? AND at>?)',
    ]);
  });

  it('keeps the claims of the window and the minute past it, of the task and of each group, and forgets older ones', async () => {
    const { db, store } = fileStore(cleanups);
    const producer = createQueue({ store, runtime: { mode: 'producer' }, logger: false });
    cleanups.push(async () => {
      await producer.close();
    });
    const rate = { max: 100, perMs: 1_000 };
    const handle = producer.define({ ...task, flow: { rate, group: { rate } } });
    await producer.ready();
    await handle.startMany(['a', 'b', 'c', 'd'].map((group) => ({ query: group, group })));
    const start = Date.now() + 1_000;
    // Claims of one run each: at the start, half a minute later, then past a minute and the window after the first.
    const times = [start, start + 30_000, start + 61_001];
    for (const now of times) expect(await store.claimDue(workerClaim([task], 1, now).request)).toHaveLength(1);
    const kept = db
      .prepare('SELECT scope, at, n FROM docket_flow_claims ORDER BY scope, at')
      .all()
      .map((row) => row as { scope: string; at: number; n: number });
    const rows = (scope: string) => kept.filter((row) => row.scope === scope).map((row) => [row.at, row.n]);
    expect(rows('task')).toEqual([
      [start + 30_000, 1],
      [start + 61_001, 1],
    ]);
    expect(rows('group')).toEqual([
      [start + 30_000, 1],
      [start + 61_001, 1],
    ]);
  });

  it("forgets a task's claims once its rate is removed, when retention's cutoff is a day and a minute past them", async () => {
    const { db, store } = fileStore(cleanups);
    const kept = () => (db.prepare('SELECT count(*) AS n FROM docket_flow_claims').get() as { n: number }).n;
    const rated = createQueue({ store, runtime: { mode: 'producer' }, logger: false });
    const rate = { max: 100, perMs: 1_000 };
    const handle = rated.define({ ...task, flow: { rate, group: { rate } } });
    await rated.ready();
    await handle.startMany(['a', 'b'].map((group) => ({ query: group, group })));
    const start = Date.now() + 1_000;
    expect(await store.claimDue(workerClaim([task], 1, start).request)).toHaveLength(1);
    await rated.close();
    expect(kept()).toBe(2);
    // Registered again without a rate: its claims prune nothing, so the claims of the task and its group stay.
    const plainStore = sqliteStore({ database: db });
    const plain = createQueue({ store: plainStore, runtime: { mode: 'producer' }, logger: false });
    cleanups.push(async () => {
      await plain.close();
    });
    plain.define(task);
    await plain.ready();
    const later = start + 86_400_000 + 60_001;
    expect(await plainStore.claimDue(workerClaim([task], 1, later).request)).toHaveLength(1);
    expect(kept()).toBe(2);
    const collect = (runsBefore: number) =>
      plainStore.collect({ namespace: 'default', runsBefore, deadLettersBefore: 0, limit: 100, after: null });
    await collect(later - 1);
    expect(kept()).toBe(2);
    await collect(later);
    expect(kept()).toBe(0);
  });
});
