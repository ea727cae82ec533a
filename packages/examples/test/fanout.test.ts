import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { runFanout } from '../src/fanout/digest.js';

/** The PostgreSQL server CI provides (`.ci/run` sets it); without it the PostgreSQL case is left out. */
const DATABASE_URL = process.env.DOCKET_TEST_DATABASE_URL;

describe('fan-out example', () => {
  it('summarises each document in a child run under the group rate limit, and writes one digest in its last commit', async () => {
    const result = await runFanout({ documents: 7 });
    expect(result).toMatchObject({
      created: true,
      status: 'success',
      children: { total: 7, settled: 7 },
      digests: 1,
      summaries: 7,
      modelRequests: 7,
    });
    expect(result.busiestSecond).toBeLessThanOrEqual(3);
  });

  it('run again on the same file, finds the digest run and asks the model nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docket-fanout-test-'));
    try {
      const filename = join(dir, 'fanout.sqlite');
      const first = await runFanout({ filename, documents: 3 });
      const again = await runFanout({ filename, documents: 3 });
      expect(again).toMatchObject({
        runId: first.runId,
        created: false,
        status: 'success',
        digests: 1,
        modelRequests: 0,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.runIf(DATABASE_URL)('keeps its runs and the digest in PostgreSQL with databaseUrl', async () => {
    const schema = `docket_fanout_${randomBytes(6).toString('hex')}`;
    try {
      const result = await runFanout({ databaseUrl: DATABASE_URL, schema, documents: 4 });
      expect(result).toMatchObject({ status: 'success', children: { total: 4, settled: 4 }, digests: 1, summaries: 4 });
    } finally {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  });
});
