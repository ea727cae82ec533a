import { createQueue } from '@docket/core';
import { type PlainClaim, planClaim, type SelectRequest, type TaskKey } from '@docket/core/store';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { FLOW_SEATS, SHARED_TAKE_MAX } from '../src/sql/claim/flow-sharing.js';
import { backendForTests, DATABASE_URL, freshSchema } from './helpers.js';

const ACTOR = 'worker:sharing';
const LEASE_MS = 30_000;

/** A claim request as the worker loop makes it (core's `planClaim`). */
function claimRequest(tasks: TaskKey[], limit: number, now = Date.now()): SelectRequest {
  const plainClaim: PlainClaim = { actor: ACTOR, leaseExpiresAt: now + LEASE_MS, at: new Date(now).toISOString() };
  return { namespace: 'default', tasks, limit, now, plainClaim, plan: (run) => planClaim(run, ACTOR, LEASE_MS, now) };
}

describe.runIf(DATABASE_URL)('flow claims that share their task lock (PostgreSQL server)', () => {
  const { db, cleanups } = backendForTests();
  const url = DATABASE_URL as string;

  /** A fresh schema with `runs` due runs of `task` under `flow`, and `stores` stores on it, opened. */
  async function fixture(task: TaskKey, flow: object, runs: number, stores = 1) {
    const schema = freshSchema();
    await db().query(`CREATE SCHEMA "${schema}"`);
    cleanups.push(async () => {
      await db().query(`DROP SCHEMA "${schema}" CASCADE`);
    });
    const producer = createQueue({ store: postgresStore(db().options(schema)), runtime: { mode: 'producer' } });
    const handle = producer.define({ ...task, flow });
    await producer.ready();
    for (let i = 0; i < runs; i += 500) {
      await handle.startMany(Array.from({ length: Math.min(500, runs - i) }, (_, j) => ({ query: i + j })));
    }
    await producer.close();
    const opened = Array.from({ length: stores }, () => postgresStore(db().options(schema)));
    for (const store of opened) await store.open();
    cleanups.push(async () => {
      for (const store of opened) await store.close();
    });
    const leased = async () => {
      const [found] = await db().query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}".docket_runs WHERE lease_owner IS NOT NULL`,
      );
      return found?.n ?? 0;
    };
    return { stores: opened, leased };
  }

  /** A client of its own in a transaction that holds the task's flow lock shared, and each seat in `seats`. */
  async function sharer(task: string, seats: number[]) {
    const client = new pg.Client(url);
    await client.connect();
    cleanups.push(() => client.end());
    const key = `default:flow:${task}`;
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))', [key]);
    for (const seat of seats)
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${key}:seat:${seat}`]);
    return { end: () => client.query('COMMIT') };
  }

  /** Whether a backend waits for an advisory lock. */
  async function waitingForLock(): Promise<boolean> {
    const [found] = await db().query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
    );
    return (found?.n ?? 0) > 0;
  }

  async function until(check: () => Promise<boolean>, what: string) {
    for (let i = 0; i < 200; i++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it('takes its runs while another claim of the task is in, when its limits are far above both', async () => {
    const task = { name: 'roomy', version: '1' };
    const { stores } = await fixture(task, { concurrency: 10_000 }, 20);
    const other = await sharer('roomy', [0]);
    // A claim alone would wait for the other claim's commit; sharing, it goes on beside it.
    expect(await stores[0]?.claimDue(claimRequest([task], 10))).toHaveLength(10);
    await other.end();
  });

  it('takes the lock alone near its limits: it waits for the claims in, then never passes the limit', async () => {
    const task = { name: 'tight', version: '1' };
    const limit = SHARED_TAKE_MAX + 10;
    const { stores, leased } = await fixture(task, { concurrency: limit }, limit + 50);
    const other = await sharer('tight', [0]);
    let claimed: unknown[] | undefined;
    const claim = stores[0]?.claimDue(claimRequest([task], SHARED_TAKE_MAX)).then((runs) => {
      claimed = runs;
    });
    await until(waitingForLock, 'the claim to wait for the flow lock');
    expect(claimed).toBeUndefined();
    await other.end();
    await claim;
    expect(claimed).toHaveLength(SHARED_TAKE_MAX);
    // Near the limit now: the next claim takes only what is left (a claim commits at the end of the turn it answers).
    expect(await stores[0]?.claimDue(claimRequest([task], SHARED_TAKE_MAX))).toHaveLength(limit - SHARED_TAKE_MAX);
    await until(async () => (await leased()) >= limit, 'the claims to commit');
    expect(await leased()).toBe(limit);
  });

  it('takes the lock alone when every seat is taken', async () => {
    const task = { name: 'seated', version: '1' };
    const { stores } = await fixture(task, { concurrency: 10_000 }, 20);
    const others = await sharer(
      'seated',
      Array.from({ length: FLOW_SEATS }, (_, i) => i),
    );
    let claimed: unknown[] | undefined;
    const claim = stores[0]?.claimDue(claimRequest([task], 10)).then((runs) => {
      claimed = runs;
    });
    await until(waitingForLock, 'the claim to wait for the flow lock');
    expect(claimed).toBeUndefined();
    await others.end();
    await claim;
    expect(claimed).toHaveLength(10);
  });

  it('never leases more than the limit when claims of three stores each could take it all at once', async () => {
    const task = { name: 'crowded', version: '1' };
    // Room for one claim of the most a sharer takes, not for two: claims that shared the lock would pass the limit.
    const limit = SHARED_TAKE_MAX + SHARED_TAKE_MAX / 2;
    const { stores, leased } = await fixture(task, { concurrency: limit }, limit + 200, 3);
    let claimed = 0;
    for (let round = 0; round < 6; round++) {
      const runs = await Promise.all(stores.map((store) => store.claimDue(claimRequest([task], SHARED_TAKE_MAX))));
      claimed += runs.reduce((sum, list) => sum + list.length, 0);
      expect(claimed).toBeLessThanOrEqual(limit);
    }
    expect(claimed).toBe(limit);
    await until(async () => (await leased()) >= limit, 'the claims to commit');
    expect(await leased()).toBe(limit);
  });
});
