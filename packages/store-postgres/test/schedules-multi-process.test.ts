import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createQueue } from '@docket/core';
import { expectOneRunPerSecond } from '@docket/core/conformance';
import pg from 'pg';
import { describe, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/process.mjs', import.meta.url));

// Several processes need a real server; .ci/run provides one (DOCKET_TEST_DATABASE_URL).
describe.runIf(DATABASE_URL)('a schedule fired by four processes on one PostgreSQL schema', () => {
  it('makes exactly one run per one-second slot for 12 s: none early, none missing', async () => {
    const url = DATABASE_URL as string;
    const schema = freshSchema();
    const queue = createQueue({
      store: postgresStore({ connectionString: url, schema }),
      runtime: { mode: 'producer' },
    });
    const task = queue.define({ name: 'tick', version: '1' });
    await queue.ready();
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await expectOneRunPerSecond({
        queue,
        task,
        processes: 4,
        seconds: 12,
        spawnTicker: (i) =>
          spawn(process.execPath, [FIXTURE, 'ticker', url, schema, `t${i}`], { stdio: ['ignore', 'pipe', 'inherit'] }),
      });
    } finally {
      await queue.close();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }, 90_000);
});
