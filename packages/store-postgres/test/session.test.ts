import { createQueue } from '@docket/core';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema } from './helpers.js';

// Sessions (statements sent as text, prepared once per connection) exist with node-postgres only.
describe.runIf(DATABASE_URL)('sessions on an application pool', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('call their prepared statements with generic plans and leave the connection its own plan_cache_mode', async () => {
    const schema = freshSchema();
    // One connection: every statement below, Docket's and the application's, runs on it.
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    cleanups.push(async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    });
    const queue = createQueue({ store: postgresStore({ pool, schema }), runtime: { mode: 'producer' } });
    cleanups.push(async () => {
      await queue.close();
    });
    const task = queue.define({ name: 'planned', version: '1' });
    await queue.ready();
    for (let i = 0; i < 8; i++) await task.start({ query: { i } });
    const plans = await pool.query<{ generic: number; custom: number }>(
      `SELECT coalesce(sum(generic_plans), 0)::int AS generic, coalesce(sum(custom_plans), 0)::int AS custom
         FROM pg_prepared_statements WHERE name LIKE 'docket_%'`,
    );
    expect(plans.rows[0]).toEqual({ generic: 8, custom: 0 });
    expect((await pool.query('SHOW plan_cache_mode')).rows[0].plan_cache_mode).toBe('auto');
  });
});
