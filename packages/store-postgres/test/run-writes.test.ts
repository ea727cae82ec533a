import { createQueue, planClaim, type RunRecord } from '@docket/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { runWritesStatement } from '../src/run-writes.js';
import { backend, DATABASE_URL, freshSchema } from './helpers.js';

describe('the run writes statement for locked rows (allLocked)', () => {
  let db: Awaited<ReturnType<typeof backend>>;
  beforeAll(async () => {
    db = await backend();
  });
  afterAll(async () => {
    await db.close();
  });

  /** Two started runs on a fresh schema, as stored, and the schema's tables. */
  async function setup() {
    const schema = freshSchema();
    const store = postgresStore(db.options(schema));
    const queue = createQueue({ store, runtime: { mode: 'producer' } });
    const task = queue.define({ name: 'locked', version: '1' });
    await queue.ready();
    const runs: RunRecord[] = [];
    for (const n of [1, 2]) runs.push((await store.getRun('default', (await task.start({ query: { n } })).runId))!);
    await queue.close();
    const name = (table: string) => `"${schema}"."${table}"`;
    const tables = {
      runs: name('docket_runs'),
      history: name('docket_history'),
      events: name('docket_events'),
      channel: '',
    };
    return { schema, runs, tables };
  }

  /** Runs `text` in a transaction (on one connection) that is rolled back, answering its rows or its error. */
  async function attempt(text: string, params: readonly unknown[]): Promise<{ rows?: unknown[]; error?: Error }> {
    const client = DATABASE_URL ? new pg.Client(DATABASE_URL) : null;
    await client?.connect();
    const query = async (q: string, p?: unknown[]) =>
      client ? (await client.query(q, p as unknown[])).rows : await db.query(q, p);
    await query('BEGIN');
    try {
      return { rows: await query(text, [...params]) };
    } catch (error) {
      return { error: error as Error };
    } finally {
      await query('ROLLBACK');
      await client?.end();
    }
  }

  it('answers no row when every write lands, and aborts when one row is not the one its plan saw', async () => {
    const { schema, runs, tables } = await setup();
    const now = Date.now();
    const claims = runs.map((current) => ({ current, write: planClaim(current, 'worker:x', 30_000, now)! }));
    const landed = runWritesStatement(tables, claims, { allLocked: true });
    expect(await attempt(landed.text, landed.params)).toEqual({ rows: [] });
    // The second run as a plan would see it a revision later than it is stored: its guard fails.
    const [first, second] = runs as [RunRecord, RunRecord];
    const moved = { ...second, revision: second.revision + 1 };
    const missing = runWritesStatement(
      tables,
      [claims[0]!, { current: moved, write: planClaim(moved, 'worker:x', 30_000, now)! }],
      { allLocked: true },
    );
    expect((await attempt(missing.text, missing.params)).error?.message).toMatch(/division by zero/);
    // Without allLocked the same writes answer the id that landed.
    const guarded = runWritesStatement(tables, [claims[0]!, { current: moved, write: planClaim(moved, 'w', 1, now)! }]);
    expect((await attempt(guarded.text, guarded.params)).rows).toEqual([{ run_id: first.runId }]);
    await db.query(`DROP SCHEMA "${schema}" CASCADE`);
  });
});
