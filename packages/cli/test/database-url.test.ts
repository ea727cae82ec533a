import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueue } from '@docket/core';
import { afterAll, describe, expect, it } from 'vitest';
import { cliAt } from './in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'docket-cli-pg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI in this process, in this file's directory. */
const docket = cliAt(dir);

// With the server .ci/run provides, the same commands work on PostgreSQL (--database-url).
describe.runIf(process.env.DOCKET_TEST_DATABASE_URL)('docket --database-url', async () => {
  it('lists, gets and cancels runs in a PostgreSQL schema', async () => {
    const url = process.env.DOCKET_TEST_DATABASE_URL as string;
    const schema = `docket_cli_${Date.now().toString(36)}`;
    const { postgresStore } = await import('@docket/store-postgres');
    const queue = createQueue({
      store: postgresStore({ connectionString: url, schema }),
      runtime: { mode: 'producer' },
    });
    const task = queue.define({ name: 'remote', version: '1' });
    await queue.ready();
    try {
      const { runId } = await task.start({ query: { on: 'postgres' } });
      const pgArgs = (args: string[]) => docket(['--database-url', url, '--schema', schema, '--json', ...args]);
      const listed = await pgArgs(['runs', 'list']);
      expect(listed.code, listed.err).toBe(0);
      expect(JSON.parse(listed.out).items.map((r: { runId: string }) => r.runId)).toEqual([runId]);
      const cancelled = await pgArgs(['runs', 'cancel', runId, '--reason', 'done with it']);
      expect(JSON.parse(cancelled.out)).toMatchObject({ kind: 'applied', status: 'cancelled' });
      expect((await task.get(runId))?.reason).toBe('OPERATOR_STOP');
    } finally {
      await queue.close();
      const pg = await import('pg');
      const pool = new pg.default.Pool({ connectionString: url });
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    }
  }, 60_000);

  it('creates nothing when a read command names a schema that does not exist', async () => {
    const url = process.env.DOCKET_TEST_DATABASE_URL as string;
    const schema = `docket_cli_typo_${Date.now().toString(36)}`;
    for (const args of [['runs', 'list'], ['runs', 'get', '0'.repeat(32)], ['dead-letters', 'list'], ['health']]) {
      const result = await docket(['--database-url', url, '--schema', schema, ...args]);
      expect(result.code, result.out).toBe(1);
      expect(result.err).toMatch(/^SCHEMA_MISMATCH: .*docket migrate/);
    }
    const pg = await import('pg');
    const pool = new pg.default.Pool({ connectionString: url });
    try {
      const found = await pool.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema]);
      expect(found.rowCount).toBe(0);
    } finally {
      await pool.end();
    }
  }, 60_000);
});
