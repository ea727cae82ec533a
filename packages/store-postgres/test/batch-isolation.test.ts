import { createQueue } from '@docket/core';
import { waitForStatus } from '@docket/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { backend, freshSchema } from './helpers.js';

/**
 * A row trigger that makes the server refuse one write of a batch: the start (or the settle) of a run whose query
 * holds `poison`. The other runs of the same batched statement did nothing wrong.
 */
async function poison(db: Awaited<ReturnType<typeof backend>>, schema: string, event: 'INSERT' | 'UPDATE') {
  await db.query(`CREATE FUNCTION "${schema}".poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.query LIKE '%poison%' AND (TG_OP = 'INSERT' OR NEW.status = 'success') THEN
          RAISE EXCEPTION 'poisoned row' USING ERRCODE = '22023';
        END IF;
        RETURN NEW;
      END $$`);
  await db.query(`CREATE TRIGGER poison BEFORE ${event} ON "${schema}".docket_runs
      FOR EACH ROW EXECUTE FUNCTION "${schema}".poison()`);
}

describe('one write the server refuses in a batch of PostgreSQL writes', () => {
  let db: Awaited<ReturnType<typeof backend>>;
  beforeAll(async () => {
    db = await backend();
  });
  afterAll(() => db.close());

  it('fails only its own start: the 49 others batched with it are created', async () => {
    const schema = freshSchema();
    const queue = createQueue({ store: postgresStore(db.options(schema)), runtime: { mode: 'producer' } });
    const task = queue.define<string>({ name: 'batched', version: '1' });
    await queue.ready();
    try {
      await poison(db, schema, 'INSERT');
      const queries = Array.from({ length: 50 }, (_, i) => (i === 17 ? 'poison' : `ok-${i}`));
      const results = await Promise.allSettled(queries.map((query) => task.start({ query })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(49);
      const refused = results[17] as PromiseRejectedResult;
      expect(refused.status).toBe('rejected');
      expect(refused.reason).toMatchObject({ code: 'STORAGE_FAILURE', details: { sqlState: '22023' } });
      const rows = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".docket_runs`);
      expect(rows[0]?.n).toBe(49);
    } finally {
      await queue.close();
      await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });

  it('fails only its own settle: the runs settled in the same batch finish', async () => {
    const schema = freshSchema();
    const errors: { fields: { runId?: string }; message: string }[] = [];
    const queue = createQueue({
      store: postgresStore(db.options(schema)),
      protocol: { pollMs: 10 },
      runtime: { concurrency: 64 },
      logger: {
        debug() {},
        info() {},
        warn() {},
        error: (fields: object, message: string) => errors.push({ fields, message }),
      },
    });
    const task = queue.define<string>({ name: 'settled', version: '1' }, { execute: (ctx) => ctx.end() });
    try {
      await queue.ready();
      await poison(db, schema, 'UPDATE');
      const started = await task.startMany(
        Array.from({ length: 40 }, (_, i) => ({ query: i === 5 ? 'poison' : `ok-${i}` })),
      );
      for (const [i, { runId }] of started.entries()) {
        if (i !== 5) await waitForStatus(task, runId, 'success');
      }
      // Its own settle is refused each time: a store failure, so no attempt is used, and it never finishes.
      const poisoned = await task.get(started[5]?.runId as string);
      expect(['pending', 'running']).toContain(poisoned?.status);
      expect(poisoned?.businessFailures).toBe(0);
      // Its refusals were logged as the store failures they are (members of a rolled-back batch are logged too).
      const commitFailures = errors.filter((e) => e.message.startsWith('page commit failed in the store'));
      expect(commitFailures.map((e) => e.fields.runId)).toContain(started[5]?.runId);
    } finally {
      await queue.close();
      await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});
