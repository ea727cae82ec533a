import { createQueue } from '@docket/core';
import { planClaim, type SelectRequest } from '@docket/core/store';
import { waitFor } from '@docket/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type PostgresStore, postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema, loggingPool, serverProducer } from './helpers.js';

const TASK = { name: 'woken', version: '1' };

/** A claim request for `TASK` as a worker makes it, with the plain claim described. */
function claimRequest(now = Date.now()): SelectRequest {
  return {
    namespace: 'default',
    tasks: [TASK],
    limit: 8,
    now,
    plainClaim: { actor: 'worker:w', leaseExpiresAt: now + 30_000, at: new Date(now).toISOString() },
    plan: (run) => planClaim(run, 'worker:w', 30_000, now),
  };
}

// LISTEN/NOTIFY across connections needs a real server.
describe.runIf(DATABASE_URL)('start notifications', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** The payloads a plain client (not Docket) hears on `channel`, as they arrive. */
  async function listen(channel: string): Promise<string[]> {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    cleanups.push(async () => {
      await client.end();
    });
    const heard: string[] = [];
    client.on('notification', (message) => heard.push(message.payload ?? ''));
    await client.query(`LISTEN "${channel}"`);
    return heard;
  }

  /** A producer queue and `workers` stores on a fresh schema, each worker store on a pool that logs its queries. */
  async function setup(workers: number) {
    const schema = freshSchema();
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    cleanups.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });
    const { queue: producer, task } = await serverProducer(schema, TASK);
    cleanups.push(async () => {
      await producer.close();
    });
    const stores: { store: PostgresStore; log: string[]; notified: () => number }[] = [];
    for (let i = 0; i < workers; i++) {
      const log: string[] = [];
      const pool = loggingPool(log);
      // Claims without holding them open: the one-round-trip claim is what these tests count.
      const store = postgresStore({ pool, schema, holdClaims: false });
      await store.open();
      let notified = 0;
      const unsubscribe = store.subscribe?.(() => notified++);
      cleanups.push(async () => {
        unsubscribe?.();
        await store.close();
        await pool.end();
      });
      stores.push({ store, log, notified: () => notified });
    }
    const listening = `LISTEN "docket_${schema}"`;
    await waitFor(
      async () =>
        (await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1', [listening])).rows[0]
          .n === workers,
      'every worker store to listen',
    );
    const history = async (runId: string) =>
      (
        await admin.query(`SELECT reason FROM "${schema}".docket_history WHERE run_id = $1 ORDER BY seq`, [runId])
      ).rows.map((r) => r.reason as string);
    return { task, stores, history, schema };
  }

  it('wakes a worker on another store, which claims the run in one round trip', async () => {
    const { task, stores, history } = await setup(1);
    const [worker] = stores as [(typeof stores)[0]];
    // A claim reads the tasks' flow states once (then at most once a second): this one finds nothing due. A worker's
    // queue registers its tasks' definitions, which its store then knows; this store reads the one it will meet.
    expect(await worker.store.claimDue(claimRequest())).toEqual([]);
    expect(await worker.store.getDefinition('default', TASK.name, TASK.version)).not.toBeNull();
    const { runId } = await task.start({ query: { n: 1 } });
    await waitFor(() => worker.notified() > 0, 'the start notification');
    worker.log.length = 0;
    const claimed = await worker.store.claimDue(claimRequest());
    expect(claimed.map((run) => [run.runId, run.status])).toEqual([[runId, 'running']]);
    expect(worker.log).toHaveLength(1);
    expect(await history(runId)).toEqual(['STARTED', 'CLAIMED']);
  });

  it("runs a start on a consumer whose poll is far away: the start's notification alone wakes it", async () => {
    const { task, schema } = await setup(0);
    const seen: unknown[] = [];
    const consumer = createQueue({
      store: postgresStore({ connectionString: DATABASE_URL as string, schema }),
      runtime: { mode: 'consumer' },
      protocol: { pollMs: 600_000 },
    });
    consumer.define(TASK, {
      execute(ctx) {
        seen.push({ query: ctx.query, runId: ctx.runId });
        return ctx.end();
      },
    });
    cleanups.push(async () => {
      await consumer.close();
    });
    await consumer.ready();
    // Past the first claim and due-time read at ready(): from here only a notification wakes the loop.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { runId } = await task.start({ query: { secret: 'swordfish' } });
    await waitFor(() => seen.length > 0, 'the handler');
    expect(seen).toEqual([{ query: { secret: 'swordfish' }, runId }]);
    await waitFor(async () => (await task.get(runId))?.status === 'success', 'the run to succeed');
  });

  it('lets exactly one of two woken stores claim a run', async () => {
    const { task, stores, history } = await setup(2);
    const { runId } = await task.start({ query: { n: 3 } });
    await waitFor(() => stores.every((s) => s.notified() > 0), 'both start notifications');
    const claims = await Promise.all(stores.map((s) => s.store.claimDue(claimRequest())));
    expect(claims.flat().map((run) => run.runId)).toEqual([runId]);
    expect(await history(runId)).toEqual(['STARTED', 'CLAIMED']);
  });

  it('tells a plain listener the namespace only: no query, no idempotency key, no row', async () => {
    const { task, stores, schema } = await setup(1);
    const [worker] = stores as [(typeof stores)[0]];
    const heard = await listen(`docket_${schema}`);
    await task.start({ query: { secret: 'swordfish' }, idempotencyKey: 'order-17' });
    await waitFor(() => heard.length > 0 && worker.notified() > 0, 'the start notification');
    expect(heard).toEqual(['default']);
  });
});
