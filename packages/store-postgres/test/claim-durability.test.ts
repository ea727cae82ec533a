import { createQueue } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { tablesIn } from '../src/context.js';
import { postgresStore } from '../src/index.js';
import { plainClaimStatement } from '../src/sql/claim/plain-statement.js';
import { preparedCall } from '../src/wire/prepared-calls.js';
import { UNFLUSHED_COMMIT } from '../src/wire/session.js';
import { DATABASE_URL, freshSchema, loggingPool } from './helpers.js';

// Whether a commit waits for the flush is a server setting: only a real server (node-postgres sessions) shows it.
describe.runIf(DATABASE_URL)('claims that do not wait for the server to flush', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A fresh schema with an application table, and an admin pool on it. */
  async function setup() {
    const schema = freshSchema();
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    await admin.query(`CREATE SCHEMA "${schema}"`);
    await admin.query(`CREATE TABLE "${schema}".app_rows (id serial PRIMARY KEY, key text NOT NULL, by text NOT NULL)`);
    cleanups.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });
    return { schema, admin };
  }

  /** Whether a message writes a transition for `reason`: in a row's JSON, or as a value a whole batch shares. */
  const writes = (text: string, reason: string) =>
    text.includes(`"reason":"${reason}"`) || text.includes(`$docket$${reason}$docket$`);

  /** Whether a message calls the plain-claim statement (its `CLAIMED` is in the statement's text, not its values). */
  const callsPlainClaim = (text: string, schema: string) => {
    const tables = tablesIn(schema);
    const request = {
      namespace: 'default',
      tasks: [{ name: 'flush', version: '1' }],
      limit: 1,
      now: 0,
      plan: () => null,
    };
    const call = preparedCall(plainClaimStatement(tables, request, { actor: '', leaseExpiresAt: 0, at: '' }));
    return text.includes(`EXECUTE ${call.name}(`);
  };

  it('commits plain claims without waiting for the flush, and starts, settles and callback-writing claims with it', async () => {
    const { schema, admin } = await setup();
    const log: string[] = [];
    const pool = loggingPool(log);
    const definition = { name: 'flush', version: '1', events: ['failure' as const] };
    const producer = createQueue({ store: postgresStore({ pool, schema }), runtime: { mode: 'producer' } });
    const task = producer.define(definition);
    const consumer = createQueue({
      // A held claim commits with the settles it carries, which wait for the flush (held-claims.test.ts).
      store: postgresStore({ pool, schema, holdClaims: false }),
      runtime: { mode: 'consumer', workerId: 'flush-worker' },
    });
    consumer.define(definition, { execute: (ctx) => ctx.end() });
    cleanups.push(async () => {
      await consumer.close();
      await producer.close();
      await pool.end();
    });
    await producer.ready();
    // Claimed together with plain claims, a run past its deadline writes a callback event: that claim waits.
    const late = await task.start({
      query: { late: true },
      limits: { deadlineAt: new Date(Date.now() + 20).toISOString() },
    });
    await new Promise((resolve) => setTimeout(resolve, 40));
    const first = await Promise.all(Array.from({ length: 3 }, (_, n) => task.start({ query: { n } })));
    await consumer.ready();
    const finished = async (ids: string[]) => {
      const { rows } = await admin.query(
        `SELECT count(*)::int AS n FROM "${schema}".docket_runs WHERE run_id = ANY($1) AND status IN ('success', 'cancelled')`,
        [ids],
      );
      return rows[0].n === ids.length;
    };
    await waitFor(() => finished([late.runId, ...first.map((s) => s.runId)]), 'the first runs to finish');
    // Too many for one notification's payload (the ordinary claim), then one start (the claim from its notification).
    const more = await Promise.all(Array.from({ length: 40 }, (_, n) => task.start({ query: { n } })));
    await waitFor(() => finished(more.map((s) => s.runId)), 'forty more runs to finish');
    const last = await task.start({ query: { last: true } });
    await waitFor(() => finished([last.runId]), 'the last run to finish');
    expect((await task.get(late.runId))?.reason).toBe('DEADLINE');

    const commits = log.filter((text) => text.includes('COMMIT'));
    const unflushed = commits.filter((text) => text.includes(UNFLUSHED_COMMIT));
    const plainClaims = commits.filter(
      (text) => (writes(text, 'CLAIMED') || callsPlainClaim(text, schema)) && !writes(text, 'DEADLINE'),
    );
    expect(plainClaims.length).toBeGreaterThanOrEqual(2);
    expect(unflushed).toEqual(plainClaims);
    for (const reason of ['STARTED', 'COMPLETED', 'DEADLINE']) {
      const waited = commits.filter((text) => writes(text, reason));
      expect(waited.length, reason).toBeGreaterThan(0);
      for (const text of waited) expect(text, reason).not.toContain(UNFLUSHED_COMMIT);
    }
    // The setting ends with each claim's transaction: the pool's connections, which an application shares, keep theirs.
    await consumer.close();
    await producer.close();
    expect(pool.idleCount).toBeGreaterThan(0);
    const clients = await Promise.all(Array.from({ length: pool.idleCount }, () => pool.connect()));
    try {
      for (const client of clients) {
        expect((await client.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('on');
      }
    } finally {
      for (const client of clients) client.release();
    }
  });

  it('claims again a run whose claim a server crash lost, and lets only one of the two executions settle', async () => {
    const { schema, admin } = await setup();
    const runs = `"${schema}".docket_runs`;
    const producer = createQueue({
      store: postgresStore({ connectionString: DATABASE_URL as string, schema }),
      runtime: { mode: 'producer' },
    });
    const definition = { name: 'lost-claim', version: '1' };
    const task = producer.define(definition);
    cleanups.push(async () => {
      await producer.close();
    });
    await producer.ready();
    /** A worker queue whose page waits for `gate`, then inserts its application row in the settle's transaction. */
    const worker = (workerId: string, gate: Promise<void>, started: () => void) => {
      const queue = createQueue({
        store: postgresStore({ connectionString: DATABASE_URL as string, schema }),
        // One slot: the first worker, its page still running, cannot claim the run again itself.
        runtime: { mode: 'consumer', workerId, concurrency: 1 },
        protocol: { pollMs: 50 },
      });
      queue.define(definition, {
        async execute(ctx) {
          started();
          await gate;
          return ctx.end({
            effect: (tx) =>
              tx.execute(
                sql`INSERT INTO ${sql.raw(`"${schema}".app_rows`)} (key, by) VALUES (${ctx.runId}, ${workerId})`,
              ),
          });
        },
      });
      cleanups.push(async () => {
        await queue.close();
      });
      return queue;
    };

    const { runId } = await task.start({ query: { n: 1 } });
    // The row before any claim: what a server that crashed before flushing the claim holds again after its restart.
    await admin.query(`CREATE TABLE "${schema}".before_claim AS SELECT * FROM ${runs} WHERE run_id = $1`, [runId]);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let firstStarted = false;
    const first = worker('first', gate, () => {
      firstStarted = true;
    });
    await first.ready();
    await waitFor(() => firstStarted, 'the first worker to start the page');
    // A held claim commits at the end of the turn its page started in: the crash below comes after that commit.
    await waitFor(async () => (await task.get(runId))?.status === 'running', 'the first claim to commit');

    // The crash: the claim, its row version and its history entry are gone; the first worker's page still runs.
    const client = await admin.connect();
    try {
      await client.query('BEGIN');
      await client.query(`DELETE FROM "${schema}".docket_history WHERE run_id = $1 AND reason = 'CLAIMED'`, [runId]);
      await client.query(`DELETE FROM ${runs} WHERE run_id = $1`, [runId]);
      await client.query(`INSERT INTO ${runs} SELECT * FROM "${schema}".before_claim`);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    let secondStarted = false;
    const second = worker('second', Promise.resolve(), () => {
      secondStarted = true;
    });
    await second.ready();
    await waitFor(async () => (await task.get(runId))?.status === 'success', 'the second worker to finish the run');
    expect(secondStarted).toBe(true);

    // The first execution settles last: its lease is gone, so its effect rolls back with its refused settle.
    release();
    await first.close();
    const rows = await admin.query(`SELECT key, by FROM "${schema}".app_rows`);
    expect(rows.rows).toEqual([{ key: runId, by: 'second' }]);
    const history = await task.history(runId);
    expect(history.map((entry) => entry.reason)).toEqual(['STARTED', 'CLAIMED', 'COMPLETED']);
    expect(history[1]?.actor).toContain('second');
    expect((await task.get(runId))?.revision).toBe(3);
  });
});
