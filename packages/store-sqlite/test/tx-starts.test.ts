import { join } from 'node:path';
import { createQueue, isDocketError, type Queue } from '@docket/core';
import { memoryStore, waitForStatus } from '@docket/core/testing';
import Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.js';
import { APP_TABLE_SQL, tempDir } from './helpers.js';

describe("starts inside the application's SQLite transaction", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  /** An application database file with its own table, and a queue (all mode) whose store shares the connection. */
  async function setUp() {
    const tmp = tempDir();
    cleanups.push(() => tmp.remove());
    const db = new Database(join(tmp.dir, 'app.sqlite'));
    cleanups.push(() => db.close());
    db.exec(APP_TABLE_SQL);
    const executed: string[] = [];
    const queue = createQueue({ store: sqliteStore({ database: db }), protocol: { pollMs: 60_000 } });
    cleanups.push(() => queue.close());
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
    const count = () => (db.prepare('SELECT count(*) AS n FROM docket_runs').get() as { n: number }).n;
    return { db, orm: drizzle({ client: db }), queue: queue as Queue, task, executed, count };
  }

  it('writes the run synchronously in a drizzle transaction; it exists once that commits, and a worker is woken', async () => {
    const { orm, task, executed, count } = await setUp();
    let started: Promise<{ runId: string; created: boolean }> | undefined;
    orm.transaction((tx) => {
      tx.run(sql`INSERT INTO app_rows (key) VALUES ('order-1')`);
      started = task.start({ query: 'order-1' }, { tx });
      // Written before the call returned, in this transaction.
      expect(tx.get<{ n: number }>(sql`SELECT count(*) AS n FROM docket_runs`)).toEqual({ n: 1 });
    });
    const { runId, created } = await (started as Promise<{ runId: string; created: boolean }>);
    expect(created).toBe(true);
    expect(count()).toBe(1);
    // The poll is a minute away: only the wake-up after the commit can run it now.
    await waitForStatus(task, runId, 'success');
    expect(executed).toEqual(['order-1']);
  });

  it('leaves no run and wakes nothing when the application rolls back, and startMany takes the tx too', async () => {
    const { db, orm, task, executed, count } = await setUp();
    let started: Promise<unknown> | undefined;
    expect(() =>
      orm.transaction((tx) => {
        started = task.startMany([{ query: 'a' }, { query: 'b' }], { tx });
        tx.run(sql`INSERT INTO app_rows (key) VALUES ('order-2')`);
        throw new Error('the order failed');
      }),
    ).toThrow('the order failed');
    expect(await (started as Promise<unknown[]>)).toHaveLength(2);
    expect(count()).toBe(0);
    expect(db.prepare('SELECT count(*) AS n FROM app_rows').get()).toEqual({ n: 0 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(executed).toEqual([]);
    // The better-sqlite3 Database itself, while its own transaction runs.
    let raw: Promise<unknown> | undefined;
    db.transaction(() => {
      raw = task.start({ query: 'raw' }, { tx: db });
    })();
    await raw;
    expect(count()).toBe(1);
  });

  it('refuses a transaction of another database, a database outside its transaction, and a tx on the memory store', async () => {
    const { db, orm, task, count } = await setUp();
    const other = new Database(':memory:');
    cleanups.push(() => other.close());
    const refusals: unknown[] = [];
    drizzle({ client: other }).transaction((tx) => {
      refusals.push(task.start({ query: 'x' }, { tx }).catch((e: unknown) => e));
    });
    refusals.push(await task.start({ query: 'x' }, { tx: db }).catch((e: unknown) => e));
    refusals.push(await task.start({ query: 'x' }, { tx: 'nope' }).catch((e: unknown) => e));
    refusals.push(await task.start({ query: 'x' }, { other: 1 } as never).catch((e: unknown) => e));
    orm.transaction(() => undefined);
    const memory = createQueue({ store: memoryStore(), runtime: { mode: 'producer' } });
    cleanups.push(() => memory.close());
    const onMemory = memory.define({ name: 'm', version: '1' });
    await memory.ready();
    refusals.push(await onMemory.start({ query: 1 }, { tx: {} }).catch((e: unknown) => e));
    for (const refusal of await Promise.all(refusals)) expect(isDocketError(refusal, 'CONFIG_INVALID')).toBe(true);
    expect(count()).toBe(0);
  });
});
