import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createQueue, type DocketErrorCode, isDocketError, type Queue } from '@docket/core';
import { type Lease, planClaim, type RunRecord } from '@docket/core/store';
import { waitFor, waitForStatus } from '@docket/core/testing';
import Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER, MIGRATIONS_TABLE, type SqliteTransaction, sqliteStore } from '../src/index.js';
import { APP_TABLE_SQL, tempDir } from './helpers.js';

async function expectCode(code: DocketErrorCode, fn: () => unknown) {
  let caught: unknown;
  try {
    await fn();
  } catch (error) {
    caught = error;
  }
  expect(isDocketError(caught), `expected ${code}, got ${String(caught)}`).toBe(true);
  expect((caught as { code: string }).code).toBe(code);
  return caught as Error & { code: string; cause?: unknown; retryable: boolean };
}

describe('sqliteStore', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  function file(): string {
    const tmp = tempDir();
    cleanups.push(tmp.remove);
    return join(tmp.dir, 'docket.sqlite');
  }

  async function queueOn(store: ReturnType<typeof sqliteStore>, mode: 'producer' | 'all' = 'producer') {
    const queue = createQueue({ store, runtime: { mode }, protocol: { pollMs: 10 } });
    cleanups.push(() => queue.close());
    return queue as Queue<SqliteTransaction>;
  }

  it('refuses bad options with CONFIG_INVALID', async () => {
    await expectCode('CONFIG_INVALID', () => sqliteStore({} as never));
    await expectCode('CONFIG_INVALID', () => sqliteStore({ filename: '' }));
    await expectCode('CONFIG_INVALID', () =>
      sqliteStore({ filename: 'a', database: new Database(':memory:') } as never),
    );
    await expectCode('CONFIG_INVALID', () => sqliteStore({ database: {} as never }));
    await expectCode('CONFIG_INVALID', () => sqliteStore({ filename: 'a', colour: 1 } as never));
    await expectCode('CONFIG_INVALID', () => sqliteStore({ filename: 'a', synchronous: 'off' as never }));
    await expectCode('CONFIG_INVALID', () => sqliteStore({ filename: 'a', checkpointMs: -1 }));
    await expectCode('CONFIG_INVALID', () => sqliteStore({ filename: 'a', checkpointMs: 1.5 }));
  });

  it('opens WAL, applies migrations once, and applying again does nothing', async () => {
    const filename = file();
    const modes: string[] = [];
    for (let i = 0; i < 2; i++) {
      const queue = await queueOn(sqliteStore({ filename }));
      queue.define({ name: 't', version: '1' });
      await queue.ready();
      // WAL while open (bytes 18 and 19 of the header are 2); the last close returns the file to the rollback journal.
      modes.push(readFileSync(filename).subarray(18, 20).join('.'));
      await queue.close();
    }
    expect(modes).toEqual(['2.2', '2.2']);
    const db = new Database(filename);
    cleanups.push(() => db.close());
    expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
    // One row per migration file, each applied once.
    const files = readdirSync(MIGRATIONS_FOLDER).filter((name) => name.endsWith('.sql')).length;
    expect(files).toBeGreaterThan(1);
    expect(db.prepare(`SELECT count(*) AS n FROM ${MIGRATIONS_TABLE}`).get()).toEqual({ n: files });
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'docket_%'").all();
    expect(tables.map((t) => (t as { name: string }).name).sort()).toEqual([
      'docket_changes',
      'docket_commands',
      'docket_definitions',
      'docket_events',
      'docket_feed_floors',
      'docket_flow_claims',
      'docket_flow_groups',
      'docket_history',
      'docket_run_counts',
      'docket_runs',
      'docket_schedules',
      'docket_settled_minutes',
      'docket_tasks',
    ]);
  });

  it('refuses a database migrated by a newer Docket with SCHEMA_MISMATCH', async () => {
    const filename = file();
    const first = await queueOn(sqliteStore({ filename }));
    await first.ready();
    await first.close();
    const db = new Database(filename);
    db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES ('future', ?)`).run(Date.now() + 10 ** 12);
    db.close();
    const queue = await queueOn(sqliteStore({ filename }));
    await expectCode('SCHEMA_MISMATCH', () => queue.ready());
    expect(queue.state).toBe('failed');
  });

  it('keeps the application tables and its own drizzle migrations table apart', async () => {
    const filename = file();
    const db = new Database(filename);
    cleanups.push(() => db.close());
    db.exec('CREATE TABLE __drizzle_migrations (id INTEGER PRIMARY KEY, hash TEXT, created_at NUMERIC)');
    db.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run('app', Date.now() + 10 ** 12);
    db.exec(APP_TABLE_SQL);
    const queue = await queueOn(sqliteStore({ database: db }), 'all');
    const task = queue.define(
      { name: 'app', version: '1' },
      { execute: (ctx) => ctx.end({ effect: (tx) => tx.run(sql`INSERT INTO app_rows (key) VALUES (${ctx.runId})`) }) },
    );
    await queue.ready();
    const { runId } = await task.start({ query: null });
    await waitForStatus(task, runId, 'success');
    expect(db.prepare('SELECT count(*) AS n FROM app_rows WHERE key = ?').get(runId)).toEqual({ n: 1 });
    await queue.close();
    expect(db.open).toBe(true); // a database the application passed in stays the application's
  });

  it('turns a trigger that raises ABORT in the effect into an attempt failure with nothing written', async () => {
    const filename = file();
    const db = new Database(filename);
    cleanups.push(() => db.close());
    db.exec(APP_TABLE_SQL);
    db.exec(
      "CREATE TRIGGER poison BEFORE INSERT ON app_rows WHEN NEW.key = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END",
    );
    const queue = await queueOn(sqliteStore({ database: db }), 'all');
    const task = queue.define<null, { step: number }>(
      { name: 'poison', version: '1', policy: { attempts: 2, backoff: { baseMs: 1, maxMs: 2 } } },
      {
        execute: (ctx) =>
          ctx.next({ step: 1 }, { effect: (tx) => tx.run(sql`INSERT INTO app_rows (key) VALUES ('poison')`) }),
      },
    );
    await queue.ready();
    const { runId } = await task.start({ query: null });
    const info = await waitForStatus(task, runId, 'failed');
    expect(info).toMatchObject({ reason: 'ATTEMPTS_EXHAUSTED', page: 1, state: null, businessFailures: 2 });
    expect(info.error?.message).toContain('poisoned row');
    expect(db.prepare('SELECT count(*) AS n FROM app_rows').get()).toEqual({ n: 0 });
  });

  it('raises STORAGE_FAILURE when Docket cannot write (read-only), leaving the run unchanged and readable', async () => {
    const filename = file();
    const db = new Database(filename);
    cleanups.push(() => db.close());
    const queue = await queueOn(sqliteStore({ database: db }));
    const task = queue.define({ name: 'ro', version: '1' });
    await queue.ready();
    const { runId } = await task.start({ query: { a: 1 } });
    const before = await task.get(runId);
    db.pragma('query_only = ON');
    const error = await expectCode('STORAGE_FAILURE', () => task.cancel(runId));
    expect(error.cause).toBeInstanceOf(Error);
    await expectCode('STORAGE_FAILURE', () => task.start({ query: { a: 2 } }));
    expect(await task.get(runId)).toEqual(before);
    expect(await task.history(runId)).toHaveLength(1);
    db.pragma('query_only = OFF');
    expect(await task.cancel(runId)).toMatchObject({ found: true, changed: true });
  });

  it('raises STORAGE_FAILURE on a full database, writing nothing half-way', async () => {
    const filename = file();
    const db = new Database(filename);
    cleanups.push(() => db.close());
    const queue = await queueOn(sqliteStore({ database: db }));
    const task = queue.define({ name: 'full', version: '1' });
    await queue.ready();
    const { runId } = await task.start({ query: null });
    const before = await task.get(runId);
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages}`);
    const big = 'x'.repeat(200_000);
    const error = await expectCode('STORAGE_FAILURE', () => task.start({ query: { big } }));
    expect(error.retryable).toBe(true);
    const runs = db.prepare('SELECT count(*) AS n FROM docket_runs').get();
    expect(runs).toEqual({ n: 1 });
    expect(await task.get(runId)).toEqual(before);
  });

  it('fails only the starts that do not fit on a full disk: the small ones batched with them are written', async () => {
    const filename = file();
    const db = new Database(filename);
    cleanups.push(() => db.close());
    const queue = await queueOn(sqliteStore({ database: db }));
    const task = queue.define({ name: 'nearly-full', version: '1' });
    await queue.ready();
    await task.start({ query: 'warm' });
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 40}`);
    const big = { big: 'x'.repeat(200_000) };
    // Issued in one turn: one batch of 50, the five oversized ones spread through it.
    const starts = Array.from({ length: 50 }, (_, i) => task.start({ query: i % 10 === 5 ? big : { small: i } }));
    const results = await Promise.allSettled(starts);
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(5);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'STORAGE_FAILURE' });
    expect(db.prepare('SELECT count(*) AS n FROM docket_runs').get()).toEqual({ n: 46 });
  });

  it('consumes no attempt when the store fails at commit: the lease expires and the run is recovered', async () => {
    const db = new Database(file());
    cleanups.push(() => db.close());
    const store = sqliteStore({ database: db });
    const queue = createQueue({ store, protocol: { pollMs: 10, leaseMs: 3000, heartbeatMs: 1000 } });
    cleanups.push(() => queue.close());
    let executions = 0;
    const task = queue.define(
      { name: 'commit-fails', version: '1', policy: { attempts: 1 } },
      {
        execute(ctx) {
          executions++;
          // Docket's own commit cannot write now: a store failure, not the page's.
          if (executions === 1) db.pragma('query_only = ON');
          return ctx.end();
        },
      },
    );
    await queue.ready();
    const { runId } = await task.start({ query: null });
    const health = await failedCommitHealth(queue);
    expect(health.status).toBe('degraded');
    expect(health.reasons.find((r) => r.startsWith('commits: '))).toMatch(/SQLite/);
    db.pragma('query_only = OFF');
    const info = await waitForStatus(task, runId, ['success', 'failed'], 15_000);
    expect(info).toMatchObject({ status: 'success', businessFailures: 0, recoveries: 1 });
    expect(executions).toBe(2);
    expect((await task.history(runId)).map((e) => e.reason)).toEqual([
      'STARTED',
      'CLAIMED',
      'LEASE_EXPIRED',
      'CLAIMED',
      'COMPLETED',
    ]);
    expect((await queue.operator.health()).reasons.some((r) => r.startsWith('commits: '))).toBe(false);
  });

  it('gives each write of a batch its own outcome when one of them fills the database', async () => {
    const db = new Database(file());
    cleanups.push(() => db.close());
    const queue = await queueOn(sqliteStore({ database: db }));
    const task = queue.define({ name: 'batch', version: '1' });
    await queue.ready();
    await task.start({ query: 'warm-up' });
    db.pragma(`max_page_count = ${(db.pragma('page_count', { simple: true }) as number) + 2}`);
    // Started in one turn of the event loop, so they share one transaction; the big one hits SQLITE_FULL, which rolls
    // back the whole transaction. The small ones did nothing wrong: they are written on their own, after it.
    const results = await Promise.allSettled([
      task.start({ query: 'small-1' }),
      task.start({ query: 'x'.repeat(200_000) }),
      task.start({ query: 'small-2' }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const full = (results[1] as PromiseRejectedResult).reason as Error;
    expect(full).toMatchObject({ code: 'STORAGE_FAILURE', retryable: true, details: { sqliteCode: 'SQLITE_FULL' } });
    expect(full.message).toBe('SQLite SQLITE_FULL: the database or disk is full');
    const queries = db.prepare('SELECT query FROM docket_runs ORDER BY run_id').all();
    expect(queries).toEqual([{ query: '"warm-up"' }, { query: '"small-1"' }, { query: '"small-2"' }]);
  });

  it('consumes no attempt when an effect meets a full disk: the run finishes once there is room', async () => {
    const db = new Database(file());
    cleanups.push(() => db.close());
    db.exec('CREATE TABLE biz (k TEXT PRIMARY KEY, body TEXT NOT NULL)');
    const queue = createQueue({
      store: sqliteStore({ database: db }),
      protocol: { pollMs: 10, leaseMs: 3000, heartbeatMs: 1000 },
      logger: false,
    });
    cleanups.push(() => queue.close());
    let executions = 0;
    const task = queue.define(
      { name: 'fills', version: '1', policy: { attempts: 1 } },
      {
        execute(ctx) {
          executions++;
          if (executions === 1) db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`);
          return ctx.end({
            effect: (tx) => {
              tx.run(sql`INSERT INTO biz (k, body) VALUES (${ctx.runId}, ${'x'.repeat(100_000)})`);
            },
          });
        },
      },
    );
    await queue.ready();
    const { runId } = await task.start({ query: null });
    const health = await failedCommitHealth(queue);
    expect(health.reasons.find((r) => r.startsWith('commits: '))).toBe(
      'commits: SQLite SQLITE_FULL: the database or disk is full',
    );
    db.pragma('max_page_count = 1073741823');
    const info = await waitForStatus(task, runId, ['success', 'failed'], 15_000);
    expect(info).toMatchObject({ status: 'success', businessFailures: 0, recoveries: 1 });
    expect(db.prepare('SELECT count(*) AS n FROM biz').get()).toEqual({ n: 1 });
  });

  it('wakes an idle worker when another connection starts a run, without waiting for its poll', async () => {
    const filename = file();
    const worker = createQueue({ store: sqliteStore({ filename }), protocol: { pollMs: 3_600_000 } });
    cleanups.push(() => worker.close());
    worker.define({ name: 'wake', version: '1' }, { execute: (ctx) => ctx.end() });
    await worker.ready();
    const producerQueue = await queueOn(sqliteStore({ filename }));
    const task = producerQueue.define({ name: 'wake', version: '1' });
    await producerQueue.ready();
    await new Promise((r) => setTimeout(r, 50));
    const { runId } = await task.start({ query: null });
    // The worker polls once an hour: only the store's change signal can make this finish.
    await waitForStatus(task, runId, 'success', 5000);
  });

  it('decides a pure plan on the row it claimed, and again on the stored row once another connection changed it', async () => {
    const filename = file();
    const producerQueue = await queueOn(sqliteStore({ filename }));
    const task = producerQueue.define({ name: 'known', version: '1' });
    await producerQueue.ready();
    const { runId } = await task.start({ query: null });
    const [mine, other] = [sqliteStore({ filename }), sqliteStore({ filename })];
    for (const store of [mine, other]) {
      await store.open();
      cleanups.push(() => store.close());
    }
    const now = Date.now();
    const tasks = [{ name: 'known', version: '1' }];
    const plan = (run: RunRecord) => planClaim(run, 'worker:test', 60_000, now);
    const [claimed] = await mine.claimDue({ namespace: 'default', tasks, limit: 1, now, plan });
    const expiresAt = claimed?.lease?.expiresAt as number;
    // A pure write with no history moves only the lease: the revision stays as `mine` remembers it.
    const renew = (current: RunRecord | null, by: number) => {
      const lease = { ...(current?.lease as Lease), expiresAt: (current?.lease?.expiresAt ?? 0) + by };
      return { write: { run: { ...(current as RunRecord), lease }, history: [], events: [] }, value: current };
    };
    await other.transact('default', runId, (_tx, current) => renew(current, 1_000), { pure: true });
    const seen: (number | undefined)[] = [];
    const final = await mine.transact(
      'default',
      runId,
      (_tx, current) => {
        seen.push(current?.lease?.expiresAt);
        return renew(current, 5);
      },
      { pure: true },
    );
    expect(seen).toEqual([expiresAt, expiresAt + 1_000]);
    expect(final?.lease?.expiresAt).toBe(expiresAt + 1_000);
    expect((await other.getRun('default', runId))?.lease?.expiresAt).toBe(expiresAt + 1_005);
  });

  it('closes a connection it opened itself when the last queue closes', async () => {
    const store = sqliteStore({ filename: file() });
    const a = await queueOn(store);
    const b = await queueOn(store);
    await a.ready();
    await b.ready();
    const connection = store.database;
    await a.close();
    expect(connection.open).toBe(true);
    await b.close();
    expect(connection.open).toBe(false);
  });

  /** Starts `n` runs through a producer on `store` and answers the database file's size before and after. */
  async function startMany(store: ReturnType<typeof sqliteStore>, filename: string, n: number) {
    const queue = await queueOn(store);
    const task = queue.define({ name: 'log', version: '1' });
    await queue.ready();
    const before = statSync(filename).size;
    for (let i = 0; i < n; i++) await task.start({ query: { i, pad: 'x'.repeat(200) } });
    return { before, queue };
  }

  it('copies the write-ahead log back into the file on a thread of its own, not in a commit', async () => {
    const filename = file();
    const store = sqliteStore({ filename, checkpointMs: 20 });
    const { before } = await startMany(store, filename, 200);
    // SQLite's automatic checkpoint stays, far away, as the safety valve: 200 starts never reach it.
    expect(store.database.pragma('wal_autocheckpoint', { simple: true })).toBe(10_000);
    // Pages reach the database file only through a checkpoint: the thread's.
    await waitFor(async () => statSync(filename).size > before || null, 'the checkpoint thread to copy the log', 5000);
  });

  it('leaves the log to the commits with checkpointMs 0, as SQLite alone does', async () => {
    const filename = file();
    const store = sqliteStore({ filename, checkpointMs: 0 });
    const { before } = await startMany(store, filename, 200);
    await new Promise((r) => setTimeout(r, 300));
    expect(statSync(filename).size).toBe(before);
  });

  it('stops its checkpoint thread when the last queue closes', async () => {
    const filename = file();
    const database = new Database(filename);
    cleanups.push(() => database.close());
    const { before: first, queue } = await startMany(sqliteStore({ database, checkpointMs: 20 }), filename, 200);
    // The thread is running: it has copied the starts' pages into the file.
    await waitFor(async () => statSync(filename).size > first || null, 'the checkpoint thread to copy the log', 5000);
    await queue.close();
    // The application's connection stays open (the store did not open it) and writes on, with no automatic
    // checkpoint of its own: only a thread left running would copy its log into the file.
    database.pragma('wal_autocheckpoint = 0');
    database.exec('CREATE TABLE app_rows (x TEXT)');
    const before = statSync(filename).size;
    const insert = database.prepare('INSERT INTO app_rows VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run('y'.repeat(500));
    await new Promise((r) => setTimeout(r, 300));
    expect(statSync(filename).size).toBe(before);
  });
});

/** Waits until `health()` reports a commit that failed in the store (`commits: ...`), and answers it. */
function failedCommitHealth(queue: Queue<SqliteTransaction>) {
  return waitFor(async () => {
    const now = await queue.operator.health();
    return now.reasons.some((r) => r.startsWith('commits: ')) ? now : null;
  }, 'health to report the failed commit');
}
