import { createQueue } from '@docket/core';
import { waitForStatus } from '@docket/core/testing';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { backend, freshSchema } from './helpers.js';

describe('an error of the application inside the commit transaction', () => {
  let db: Awaited<ReturnType<typeof backend>>;
  beforeAll(async () => {
    db = await backend();
  });
  afterAll(() => db.close());

  it("is the page's failure, attempts and all, even when it is a SQL error with a SQLSTATE", async () => {
    const schema = freshSchema();
    await db.query(`CREATE SCHEMA "${schema}"`);
    await db.query(`CREATE TABLE "${schema}".notices (id text PRIMARY KEY)`);
    await db.query(`INSERT INTO "${schema}".notices (id) VALUES ('taken')`);
    const queue = createQueue({ store: postgresStore(db.options(schema)), protocol: { pollMs: 10 } });
    try {
      let executions = 0;
      const task = queue.define(
        { name: 'dup', version: '1', policy: { attempts: 2, backoff: { baseMs: 1, maxMs: 5, jitter: 'full' } } },
        {
          execute(ctx) {
            executions++;
            // A unique violation (23505) inside the effect: the application's failure, not the store's.
            return ctx.end({
              effect: (tx) => tx.execute(sql`INSERT INTO ${sql.raw(`"${schema}".notices`)} (id) VALUES ('taken')`),
            });
          },
        },
      );
      await queue.ready();
      const { runId } = await task.start({ query: null });
      const info = await waitForStatus(task, runId, ['failed', 'success', 'cancelled']);
      expect(info).toMatchObject({
        status: 'failed',
        reason: 'ATTEMPTS_EXHAUSTED',
        businessFailures: 2,
        recoveries: 0,
      });
      expect(info.error?.code).not.toBe('STORAGE_FAILURE');
      expect(info.error?.message).toMatch(/duplicate key|unique/i);
      expect(executions).toBe(2);
    } finally {
      await queue.close();
      await db.query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });
});
