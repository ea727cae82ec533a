import { DocketError } from '@docket/core';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { Checkouts, endPool, poolTransaction } from '../src/pool-clients.js';
import { DATABASE_URL, freshSchema } from './helpers.js';

/** A pool of one connection, so that one client that never comes back starves every later call. */
function poolOfOne(): pg.Pool {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1, connectionTimeoutMillis: 3_000 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

// The checkouts need node-postgres on the real server (.ci/run provides it).
describe.runIf(DATABASE_URL)('pool clients: every checkout goes back whatever fails', () => {
  let pool: pg.Pool | null = null;
  afterEach(async () => {
    await pool?.end().catch(() => undefined);
    pool = null;
  });

  it('a transaction whose BEGIN meets a dead connection gives its client back, so the next call gets one', async () => {
    pool = poolOfOne();
    const checkouts = new Checkouts(pool);
    let worked = false;
    // The connection dies between the checkout and BEGIN, as when a backend is terminated at that moment.
    const failing = poolTransaction(
      checkouts,
      (client) => {
        (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
        return drizzle({ client });
      },
      async () => {
        worked = true;
      },
    );
    await expect(failing).rejects.toThrow(/Failed query: begin/);
    expect(worked).toBe(false);
    // With the only client leaked, this would time out ("timeout exceeded when trying to connect").
    const answer = await poolTransaction(
      checkouts,
      (client) => drizzle({ client }),
      async (tx) => ((await tx.execute('SELECT 41 + 1 AS n')) as unknown as { rows: unknown[] }).rows[0],
    );
    expect(answer).toEqual({ n: 42 });
    expect(pool.totalCount).toBe(1);
  });

  it("the work's own error rolls back and keeps the connection for the next call", async () => {
    pool = poolOfOne();
    const checkouts = new Checkouts(pool);
    const first = await pool.connect();
    const pid = (await first.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    first.release();
    const failure = new Error('business');
    await expect(
      poolTransaction(
        checkouts,
        (client) => drizzle({ client }),
        async () => {
          throw failure;
        },
      ),
    ).rejects.toBe(failure);
    const again = await pool.connect();
    expect((await again.query('SELECT pg_backend_pid() AS pid')).rows[0].pid).toBe(pid);
    again.release();
  });

  it('endPool returns within its bound while a call still holds a client, and drops that client', async () => {
    pool = poolOfOne();
    const checkouts = new Checkouts(pool);
    await checkouts.take(); // never given back, as by a call that hangs
    const started = Date.now();
    await endPool(pool, checkouts, 300);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(pool.totalCount).toBe(0);
    pool = null;
  });

  it('endPool returns even while a client taken around the checkouts is never given back', async () => {
    pool = poolOfOne();
    const checkouts = new Checkouts(pool);
    await pool.connect(); // kept, as a driver that lost track of a client would keep it
    const started = Date.now();
    await endPool(pool, checkouts, 300);
    expect(Date.now() - started).toBeLessThan(5_000);
    pool = null;
  });

  it("a store's migration whose BEGIN meets a dead connection fails with a coded error and gives its client back", async () => {
    pool = poolOfOne();
    let acquired = 0;
    // The first checkout is the store's check that the server answers; the second is the migration's transaction.
    pool.on('acquire', (client) => {
      if (++acquired === 2)
        (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    });
    const schema = freshSchema();
    const store = postgresStore({ pool, schema });
    await expect(store.open()).rejects.toBeInstanceOf(DocketError);
    // With the only client leaked, this would time out ("timeout exceeded when trying to connect").
    expect((await pool.query('SELECT 41 + 1 AS n')).rows[0]).toEqual({ n: 42 });
    await store.open();
    await store.close();
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  it('a checkout given back twice is released once', async () => {
    pool = poolOfOne();
    const checkouts = new Checkouts(pool);
    const client = await checkouts.take();
    checkouts.give(client);
    expect(() => checkouts.give(client, new Error('late'))).not.toThrow();
    const next = await checkouts.take();
    checkouts.give(next);
    expect(pool.idleCount).toBe(1);
  });
});
