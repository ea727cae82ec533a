import { createQueue } from '@docket/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema } from './helpers.js';

/** The URL with another user and its password. */
function as(url: string, user: string, password: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = password;
  return u.toString();
}

describe.runIf(DATABASE_URL)('the changes feed for readers that may not write', () => {
  const url = DATABASE_URL as string;
  const schema = freshSchema();
  const role = `docket_reader_${schema.slice(-12)}`;
  const admin = new pg.Client(url);

  beforeAll(() => admin.connect());
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.end();
  });

  it('a role with SELECT only reads entries that nobody sequenced yet; a read-only session reads what is sequenced', async () => {
    const writer = createQueue({
      store: postgresStore({ connectionString: url, schema }),
      runtime: { mode: 'producer' },
      logger: false,
    });
    const task = writer.define({ name: 'seen', version: '1' });
    await writer.ready();
    const { runId } = await task.start({ query: 1 });
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'reader'`);
    await admin.query(`GRANT USAGE ON SCHEMA "${schema}" TO ${role}`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO ${role}`);
    const unsequenced = await admin.query(
      `SELECT count(*)::int AS n FROM "${schema}".docket_changes WHERE position IS NULL`,
    );
    expect(unsequenced.rows[0].n).toBe(1);
    const reader = createQueue({
      store: postgresStore({ connectionString: as(url, role, 'reader'), schema, migrate: false }),
      runtime: { mode: 'producer' },
      logger: false,
    });
    await reader.ready();
    const page = await reader.operator.changes();
    expect(page.items.map((c) => [c.runId, c.seq, c.to])).toEqual([[runId, 1, 'pending']]);
    // The role cannot write the tables itself.
    const direct = await reader.operator.changes({ after: page.next });
    expect(direct.items).toEqual([]);
    const roleClient = new pg.Client(as(url, role, 'reader'));
    await roleClient.connect();
    await expect(roleClient.query(`DELETE FROM "${schema}".docket_changes`)).rejects.toThrow(/permission denied/);
    await roleClient.end();
    await reader.close();

    const second = await task.start({ query: 2 });
    const readOnly = createQueue({
      store: postgresStore({
        connectionString: url,
        schema,
        migrate: false,
        poolConfig: { options: '-c default_transaction_read_only=on' },
      }),
      runtime: { mode: 'producer' },
      logger: false,
    });
    await readOnly.ready();
    // Nothing sequenced the new entry: a read-only session cannot, and reads on without error.
    const stale = await readOnly.operator.changes({ after: page.next });
    expect(stale.items).toEqual([]);
    await writer.operator.changes({ after: page.next });
    const fresh = await readOnly.operator.changes({ after: page.next });
    expect(fresh.items.map((c) => c.runId)).toEqual([second.runId]);
    await readOnly.close();
    await writer.close();
  });

  it("numbers staged rows with their run's task when read, and deletes those whose run is gone", async () => {
    const queue = createQueue({
      store: postgresStore({ connectionString: url, schema }),
      runtime: { mode: 'producer' },
      logger: false,
    });
    const task = queue.define({ name: 'staged', version: '3' });
    await queue.ready();
    const kept = await task.start({ query: 1 });
    const gone = await task.start({ query: 2 });
    const staged = await admin.query(
      `SELECT run_id, namespace, position FROM "${schema}".docket_changes WHERE run_id = ANY($1) ORDER BY id`,
      [[kept.runId, gone.runId]],
    );
    expect(staged.rows).toEqual([
      { run_id: kept.runId, namespace: null, position: null },
      { run_id: gone.runId, namespace: null, position: null },
    ]);
    await admin.query(`DELETE FROM "${schema}".docket_history WHERE run_id = $1`, [gone.runId]);
    await admin.query(`DELETE FROM "${schema}".docket_runs WHERE run_id = $1`, [gone.runId]);
    const page = await queue.operator.changes({ taskName: 'staged' });
    expect(page.items.map((c) => [c.runId, c.task])).toEqual([[kept.runId, { name: 'staged', version: '3' }]]);
    const left = await admin.query(`SELECT count(*)::int AS n FROM "${schema}".docket_changes WHERE position IS NULL`);
    expect(left.rows[0].n).toBe(0);
    await queue.close();
  });

  it('removes staged rows nobody numbered once they are past retention, and expires older cursors', async () => {
    const at = { now: Date.now() };
    const queue = createQueue({
      store: postgresStore({ connectionString: url, schema }),
      runtime: { mode: 'producer' },
      logger: false,
      clock: { now: () => at.now },
      retention: { runsMs: 60_000, deadLettersMs: 60_000 },
    });
    const task = queue.define({ name: 'unread', version: '1' });
    await queue.ready();
    const { next: cursor } = await queue.operator.changes({ from: 'now' });
    await task.start({ query: 1 });
    await task.start({ query: 2 });
    const staged = `SELECT count(*)::int AS n FROM "${schema}".docket_changes WHERE position IS NULL`;
    expect((await admin.query(staged)).rows[0].n).toBe(2);
    at.now += 61_000;
    await queue.operator.maintenance.collect();
    expect((await admin.query(staged)).rows[0].n).toBe(0);
    await expect(queue.operator.changes({ after: cursor })).rejects.toMatchObject({ code: 'CURSOR_EXPIRED' });
    const fresh = await task.start({ query: 3 });
    const page = await queue.operator.changes({ taskName: 'unread' });
    expect(page.items.map((c) => c.runId)).toEqual([fresh.runId]);
    await queue.close();
  });
});
