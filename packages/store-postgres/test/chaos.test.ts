import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createQueue } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/process.mjs', import.meta.url));
const APP = 'docket-chaos';

// Killing backends needs the real server (.ci/run provides it).
describe.runIf(DATABASE_URL)('chaos: PostgreSQL backends of two worker processes killed while they run', () => {
  let admin: pg.Pool;
  beforeAll(() => {
    admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  });
  afterAll(() => admin.end());

  it('loses no run, commits no page twice, writes no business row twice, and leaves every run terminal', async () => {
    const schema = freshSchema();
    const runs = 1000;
    const pages = 3;
    const url = `${DATABASE_URL}${DATABASE_URL?.includes('?') ? '&' : '?'}application_name=${APP}`;
    const producer = createQueue({
      store: postgresStore({ connectionString: DATABASE_URL as string, schema }),
      runtime: { mode: 'producer' },
      logger: false,
    });
    const task = producer.define({
      name: 'chaos',
      version: '1',
      policy: { attempts: 5, backoff: { baseMs: 5, maxMs: 50 } },
    });
    await producer.ready();
    await admin.query(`CREATE TABLE "${schema}".biz (run_id text NOT NULL, page integer NOT NULL)`);
    const ids: string[] = [];
    for (let i = 0; i < runs; i += 500) {
      const chunk = Array.from({ length: 500 }, (_, j) => ({ query: { i: i + j, pages } }));
      for (const { runId } of await task.startMany(chunk)) ids.push(runId);
    }
    const workers = [0, 1].map((w) =>
      spawn(process.execPath, [FIXTURE, 'chaos', url, schema, `chaos-${w}`], { stdio: 'ignore' }),
    );
    const one = async (text: string) => Number((await admin.query(text)).rows[0].n);
    const written = () => one(`SELECT count(*)::int AS n FROM "${schema}".biz`);
    let killed = 0;
    try {
      // 30 backends of the workers terminated, spread over the first four fifths of the work.
      while (killed < 30) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        if ((await written()) < (0.8 * (killed + 1) * runs * pages) / 30) continue;
        const victims = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1
           ORDER BY random() LIMIT 1`,
          [APP],
        );
        killed += victims.rowCount ?? 0;
      }
      await waitFor(
        async () =>
          (await one(
            `SELECT count(*)::int AS n FROM "${schema}".docket_runs WHERE status IN ('success', 'failed', 'cancelled')`,
          )) === runs,
        'every run to end',
        120_000,
      );
      const figures = {
        kills: killed,
        runsLost: runs - (await one(`SELECT count(*)::int AS n FROM "${schema}".docket_runs`)),
        runsFailed: await one(`SELECT count(*)::int AS n FROM "${schema}".docket_runs WHERE status <> 'success'`),
        pagesCommittedTwice: await one(`SELECT count(*)::int AS n FROM (SELECT run_id FROM "${schema}".docket_history
          WHERE reason IN ('PAGE_COMMITTED', 'COMPLETED') GROUP BY run_id HAVING count(*) > ${pages}) t`),
        duplicateBusinessRows: await one(`SELECT coalesce(sum(n - 1), 0)::int AS n FROM (SELECT count(*) AS n
          FROM "${schema}".biz GROUP BY run_id, page HAVING count(*) > 1) t`),
        missingBusinessRows:
          runs * pages - (await one(`SELECT count(DISTINCT (run_id, page))::int AS n FROM "${schema}".biz`)),
      };
      process.stdout.write(`postgres chaos figures: ${JSON.stringify(figures)}\n`);
      expect(figures).toEqual({
        kills: 30,
        runsLost: 0,
        runsFailed: 0,
        pagesCommittedTwice: 0,
        duplicateBusinessRows: 0,
        missingBusinessRows: 0,
      });
      expect(ids).toHaveLength(runs);
    } finally {
      for (const worker of workers) worker.kill('SIGKILL');
      await producer.close();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  }, 240_000);
});
