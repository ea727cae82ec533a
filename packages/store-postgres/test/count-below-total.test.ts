import { createQueue } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { tablesIn } from '../src/context.js';
import { postgresStore } from '../src/index.js';
import { COUNT_REACHES_TOTAL, countBelowTotalText } from '../src/writes/family.js';
import { DATABASE_URL, freshSchema, loggingPool } from './helpers.js';

const PARENT = { name: 'counted-parent', version: '1' };
const CHILD = { name: 'counted-child', version: '1' };

describe.skipIf(!DATABASE_URL)('children counted with their COMMIT (a real server)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * A queue on a fresh schema whose parent task starts `n` children, which run one at a time (each settle is a batch
   * of its own); with `hold`, the first child's page waits until the test ends, so none settles. Answers the parent's
   * run id.
   */
  async function family(n: number, hold: boolean, log: string[] = []) {
    const schema = freshSchema();
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    const pool = loggingPool(log);
    const queue = createQueue({
      store: postgresStore({ pool, schema }),
      runtime: { mode: 'all', concurrency: 1, workerId: 'counted' },
    });
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const child = queue.define(CHILD, {
      execute: async (ctx) => {
        if (hold) await held;
        return ctx.end();
      },
    });
    const parent = queue.define(PARENT, {
      execute: (ctx) =>
        ctx.page === 1
          ? ctx.next(null, { children: Array.from({ length: n }, (_, i) => ({ task: child, query: { i } })) })
          : ctx.end(),
    });
    cleanups.push(async () => {
      release();
      await queue.close();
      await pool.end();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });
    await queue.ready();
    const { runId } = await parent.start({ query: {} });
    const counter = async () =>
      JSON.parse(
        (await admin.query(`SELECT children FROM "${schema}".docket_runs WHERE run_id = $1`, [runId])).rows[0].children,
      ) as { total: number; settled: number };
    return { schema, admin, queue, runId, counter };
  }

  it('raises a counter that stays below its total, and otherwise fails, leaving the parent as it was', async () => {
    const { schema, admin, queue, runId, counter } = await family(3, true);
    await waitFor(async () => (await queue.operator.runs.get(runId))?.status === 'waiting', 'the parent to wait');
    const step = (by: number) =>
      countBelowTotalText(tablesIn(schema), { kind: 'count', namespace: 'default', parentRunId: runId, by, now: 1 });
    const client = await admin.connect();
    try {
      await client.query('BEGIN');
      await client.query(step(1));
      await client.query('COMMIT');
      expect(await counter()).toMatchObject({ total: 3, settled: 1 });
      await client.query('BEGIN');
      await client.query(step(1));
      await expect(client.query(step(1))).rejects.toMatchObject({ code: COUNT_REACHES_TOTAL });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect(await counter()).toMatchObject({ total: 3, settled: 1 });
    expect((await queue.operator.runs.get(runId))?.status).toBe('waiting');
  });

  it('commits a count below the total in its message; the last goes back to its savepoint, is walked, wakes the parent once', async () => {
    const log: string[] = [];
    const { admin, schema, queue, runId, counter } = await family(3, false, log);
    await waitFor(async () => (await queue.operator.runs.get(runId))?.status === 'success', 'the parent to succeed');
    expect(await counter()).toMatchObject({ total: 3, settled: 3 });
    const counts = log.filter((text) => text.includes('WITH counted AS'));
    // Three settles, one child each: two counts below the total committed with them, the third reached it.
    expect(counts).toHaveLength(3);
    expect(log.filter((text) => text === 'ROLLBACK TO SAVEPOINT counts')).toHaveLength(1);
    // The walk that wakes the parent takes its row from the count's UPDATE, which locked it: no read of its own.
    expect(log.filter((text) => text.includes('run_id = $2 FOR UPDATE'))).toEqual([]);
    const reasons = await admin.query(
      `SELECT reason FROM "${schema}".docket_history WHERE run_id = $1 AND reason = 'CHILDREN_SETTLED'`,
      [runId],
    );
    expect(reasons.rows).toHaveLength(1);
    const children = await queue.operator.runs.list({ parentRunId: runId });
    expect(children.items.map((c) => c.status)).toEqual(['success', 'success', 'success']);
  });
});
