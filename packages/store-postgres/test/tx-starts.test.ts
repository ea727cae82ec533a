import { createQueue, isDocketError } from '@docket/core';
import { waitForStatus } from '@docket/core/testing';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema } from './helpers.js';

// Transactions of the application's own pool need the real server (.ci/run provides it).
describe.runIf(DATABASE_URL)("starts inside the application's PostgreSQL transaction", () => {
  let pool: pg.Pool;
  const schemas: string[] = [];
  beforeAll(() => {
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 6 });
  });
  afterAll(async () => {
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  async function setUp() {
    const schema = freshSchema();
    schemas.push(schema);
    await pool.query(`CREATE SCHEMA "${schema}"`);
    await pool.query(`CREATE TABLE "${schema}".orders (id text PRIMARY KEY)`);
    const executed: string[] = [];
    // A long poll: only the NOTIFY delivered at the application's commit can wake the worker soon.
    const queue = createQueue({ store: postgresStore({ pool, schema }), protocol: { pollMs: 60_000 } });
    const task = queue.define<string>(
      { name: 'notify', version: '1' },
      {
        execute(ctx) {
          executed.push(ctx.query);
          return ctx.end();
        },
      },
    );
    await queue.ready();
    const count = async () =>
      Number((await pool.query(`SELECT count(*) AS n FROM "${schema}".docket_runs`)).rows[0]?.n);
    return { schema, queue, task, executed, count, orders: sql.raw(`"${schema}".orders`) };
  }

  it('writes the run in a drizzle transaction; it exists and runs once that commits, and never if it rolls back', async () => {
    const { queue, task, executed, count, orders } = await setUp();
    try {
      const db = drizzle({ client: pool });
      const { runId } = await db.transaction(async (tx) => {
        await tx.execute(sql`INSERT INTO ${orders} (id) VALUES ('o-1')`);
        const started = await task.start({ query: 'o-1' }, { tx });
        expect(await count()).toBe(0); // not visible outside the transaction before its commit
        return started;
      });
      await waitForStatus(task, runId, 'success');
      const failed = await db
        .transaction(async (tx) => {
          await task.startMany([{ query: 'o-2' }, { query: 'o-3' }], { tx });
          throw new Error('the order failed');
        })
        .catch((e: unknown) => e);
      expect((failed as Error).message).toBe('the order failed');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await count()).toBe(1);
      expect(executed).toEqual(['o-1']);
    } finally {
      await queue.close();
    }
  });

  it('takes a pg client inside BEGIN, and refuses a transaction that does not reach the store schema', async () => {
    const { queue, task, count, schema } = await setUp();
    try {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await task.start({ query: 'rolled back' }, { tx: client });
        await client.query('ROLLBACK');
        await client.query('BEGIN');
        const { runId } = await task.start({ query: 'kept' }, { tx: client });
        await client.query('COMMIT');
        await waitForStatus(task, runId, 'success');
      } finally {
        client.release();
      }
      expect(await count()).toBe(1);
      // A store of another schema, handed this pool's transaction of the first schema's database: no such table.
      const elsewhere = freshSchema();
      schemas.push(elsewhere);
      const other = createQueue({ store: postgresStore({ pool, schema: elsewhere }), runtime: { mode: 'producer' } });
      const otherTask = other.define({ name: 'notify', version: '1' });
      await other.ready();
      await pool.query(`DROP TABLE "${elsewhere}".docket_runs CASCADE`);
      const refused = await drizzle({ client: pool })
        .transaction((tx) => otherTask.start({ query: 'x' }, { tx }))
        .catch((e: unknown) => e);
      expect(isDocketError(refused, 'CONFIG_INVALID')).toBe(true);
      const notTx = await task.start({ query: 'x' }, { tx: 42 }).catch((e: unknown) => e);
      expect(isDocketError(notTx, 'CONFIG_INVALID')).toBe(true);
      await other.close();
      expect(schema).not.toBe(elsewhere);
    } finally {
      await queue.close();
    }
  });
});
