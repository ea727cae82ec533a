import { createQueue } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema, loggingPool } from './helpers.js';

const PARENT = { name: 'walked-parent', version: '1' };
const CHILD = { name: 'walked-child', version: '1' };

describe.skipIf(!DATABASE_URL)('the family walk on a real server', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('counts each settled child on its parent, wakes it once at the last, and reads no parent row of its own', async () => {
    const schema = freshSchema();
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    const log: string[] = [];
    const pool = loggingPool(log);
    // One slot: the children run one at a time, so each settle is a batch of its own and counts its parent.
    const queue = createQueue({
      store: postgresStore({ pool, schema }),
      runtime: { mode: 'all', concurrency: 1, workerId: 'walked' },
    });
    const child = queue.define(CHILD, { execute: (ctx) => ctx.end() });
    const parent = queue.define(PARENT, {
      execute: (ctx) =>
        ctx.page === 1
          ? ctx.next(null, { children: [0, 1, 2].map((i) => ({ task: child, query: { i } })) })
          : ctx.end(),
    });
    cleanups.push(async () => {
      await queue.close();
      await pool.end();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });
    await queue.ready();
    const { runId } = await parent.start({ query: {} });
    await waitFor(async () => (await queue.operator.runs.get(runId))?.status === 'success', 'the parent to succeed');
    const [row] = (await admin.query(`SELECT children FROM "${schema}".docket_runs WHERE run_id = $1`, [runId])).rows;
    expect(JSON.parse(row.children)).toMatchObject({ total: 3, settled: 3 });
    const woken = await admin.query(
      `SELECT reason FROM "${schema}".docket_history WHERE run_id = $1 AND reason = 'CHILDREN_SETTLED'`,
      [runId],
    );
    expect(woken.rows).toHaveLength(1);
    // The walk that wakes the parent takes its row from the count's UPDATE, which locked it: no read of its own.
    expect(log.filter((text) => text.includes('run_id = $2 FOR UPDATE'))).toEqual([]);
    const children = await queue.operator.runs.list({ parentRunId: runId });
    expect(children.items.map((c) => c.status)).toEqual(['success', 'success', 'success']);
  });
});
