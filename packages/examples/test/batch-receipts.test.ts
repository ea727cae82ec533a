import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { runBatchReceipts } from '../src/batch/receipts.js';

/** The PostgreSQL server CI provides (`.ci/run` sets it); without it the PostgreSQL case is left out. */
const DATABASE_URL = process.env.DOCKET_TEST_DATABASE_URL;

describe('batch receipts example', () => {
  it('ends with 203 receipts, 5 page reads (4 pages and the retried one) and 1 completion', async () => {
    const result = await runBatchReceipts();
    expect(result).toMatchObject({ status: 'success', receipts: 203, pageReads: 5, completions: 1, deliveries: 1 });
  });

  it('run again on the same file, finds the finished run and ends at once: no page read, nothing written twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docket-receipts-test-'));
    try {
      const filename = join(dir, 'receipts.sqlite');
      const first = await runBatchReceipts({ filename });
      expect(first).toMatchObject({ filename, created: true, pageReads: 5 });
      const again = await runBatchReceipts({ filename });
      expect(again).toMatchObject({
        runId: first.runId,
        created: false,
        status: 'success',
        receipts: 203,
        pageReads: 0,
        completions: 1,
        deliveries: 0,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('removes the temporary file it made when no file is given', async () => {
    const made = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('docket-receipts-')));
    const before = made();
    const result = await runBatchReceipts({ failOnPage: 0 });
    expect(result).toMatchObject({ filename: null, status: 'success', receipts: 203 });
    expect([...made()].filter((name) => !before.has(name))).toEqual([]);
  });

  it('reads 4 pages and writes the same receipts without the forced failure', async () => {
    const result = await runBatchReceipts({ failOnPage: 0 });
    expect(result).toMatchObject({ status: 'success', receipts: 203, pageReads: 4, completions: 1 });
  });

  it.runIf(DATABASE_URL)(
    'keeps its run in PostgreSQL with databaseUrl: the same receipts, the run and its history in that schema',
    async () => {
      const schema = `docket_receipts_${randomBytes(6).toString('hex')}`;
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        const result = await runBatchReceipts({ databaseUrl: DATABASE_URL, schema });
        expect(result).toMatchObject({ status: 'success', receipts: 203, pageReads: 5, completions: 1 });
        const runs = await client.query(`SELECT run_id, status FROM "${schema}".docket_runs`);
        expect(runs.rows).toEqual([{ run_id: result.runId, status: 'success' }]);
        // Four pages and the forced failure's retry, each claimed (running) and then moved on, retried or ended.
        const history = await client.query(
          `SELECT to_status FROM "${schema}".docket_history WHERE run_id = $1 ORDER BY seq`,
          [result.runId],
        );
        expect(history.rows.map((row) => row.to_status)).toEqual([
          'pending',
          'running',
          'pending',
          'running',
          'retrying',
          'running',
          'pending',
          'running',
          'pending',
          'running',
          'success',
        ]);
      } finally {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      }
    },
  );
});
