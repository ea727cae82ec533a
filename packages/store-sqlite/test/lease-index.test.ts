import { createQueue } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { fileStore } from './helpers.js';

const LEASED_BY_GROUP = `SELECT group_key, count(*) AS n FROM docket_runs INDEXED BY docket_runs_lease
  WHERE namespace = 'default' AND task_name = 'limited' AND lease_expires_at IS NOT NULL
  GROUP BY group_key ORDER BY group_key`;

describe('the runs holding a lease, in one index by task and group (a real SQLite file)', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('keeps one lease index on the runs table, beside the claim, group, parent and key indexes', async () => {
    const { db, store } = fileStore(cleanups);
    await store.open();
    const names = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'docket_runs' ORDER BY name")
      .all()
      .map((row) => (row as { name: string }).name);
    expect(names).toEqual([
      'docket_runs_claim_priority',
      'docket_runs_group_claim',
      'docket_runs_idempotency',
      'docket_runs_lease',
      'docket_runs_parent',
    ]);
    await store.close();
  });

  it('holds exactly the leased runs of each group, which the group limit counts, and none once they settle', async () => {
    const { db, store } = fileStore(cleanups);
    const queue = createQueue({ store, runtime: { concurrency: 8 }, logger: false });
    cleanups.push(async () => {
      await queue.close();
    });
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const task = queue.define<{ n: number }>(
      { name: 'limited', version: '1', flow: { group: { concurrency: 2 } } },
      {
        async execute(ctx) {
          await released;
          return ctx.end();
        },
      },
    );
    await queue.ready();
    const started = [];
    for (let n = 0; n < 6; n++) started.push(await task.start({ query: { n }, group: n < 4 ? 'a' : 'b' }));
    // Group a has four due runs and may hold two leases; group b has two.
    await waitFor(
      () =>
        JSON.stringify(db.prepare(LEASED_BY_GROUP).all()) ===
        JSON.stringify([
          { group_key: 'a', n: 2 },
          { group_key: 'b', n: 2 },
        ]),
      'two leases in each group',
    );
    const statuses = started.map(({ runId }) => {
      const row = db.prepare('SELECT status, lease_owner FROM docket_runs WHERE run_id = ?').get(runId);
      return row as { status: string; lease_owner: string | null };
    });
    expect(statuses.filter((row) => row.status === 'running' && row.lease_owner !== null)).toHaveLength(4);
    release();
    for (const { runId } of started) await task.wait(runId, { timeoutMs: 10_000 });
    expect(db.prepare(LEASED_BY_GROUP).all()).toEqual([]);
  });
});
