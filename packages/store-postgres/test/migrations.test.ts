import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createQueue } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzleLite } from 'drizzle-orm/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER, postgresStore } from '../src/index.js';
import { applyMigrations } from '../src/migrations.js';
import { docketRuns } from '../src/schema.js';
import { columnsOf } from '../src/wire/recordsets.js';
import { backend, DATABASE_URL, freshSchema } from './helpers.js';

const DEFINITION = { name: 'layout', version: '1' } as const;

describe('migrations', () => {
  let db: Awaited<ReturnType<typeof backend>>;
  const schemas: string[] = [];

  beforeAll(async () => {
    db = await backend();
  });
  afterAll(async () => {
    for (const schema of schemas) await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await db.close();
  });

  const schemaName = () => {
    const schema = freshSchema();
    schemas.push(schema);
    return schema;
  };

  /** A drizzle database on the test backend, for applying some of the migrations by hand. */
  function drizzleOf(schema: string) {
    const options = db.options(schema) as { pool?: never; pglite?: never };
    return options.pool ? drizzlePg({ client: options.pool }) : drizzleLite({ client: options.pglite as never });
  }

  async function columnOrder(schema: string): Promise<string[]> {
    const rows = await db.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = $1 AND table_name = 'docket_runs' ORDER BY ordinal_position`,
      [schema],
    );
    return rows.map((r) => r.column_name);
  }

  async function fillfactor(schema: string): Promise<string[] | null> {
    const rows = await db.query<{ reloptions: string[] | null }>(
      `SELECT c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = 'docket_runs'`,
      [schema],
    );
    return rows[0]?.reloptions ?? null;
  }

  it('lays the run row out as schema.ts declares it, the columns claims and settles change at the end, fillfactor 50', async () => {
    const schema = schemaName();
    const store = postgresStore(db.options(schema));
    await store.open();
    await store.close();
    expect(await columnOrder(schema)).toEqual(columnsOf(docketRuns).map((c) => c.name));
    // Then only the columns migrations 0004, 0006, 0008 and 0009 appended, which a claim or settle never changes (a
    // flow hold changes `rate_limited`, a child's settle its parent's `children`, rarely): an unchanged suffix is left
    // out of the WAL record as an unchanged prefix is.
    expect((await columnOrder(schema)).slice(-18)).toEqual([
      'status',
      'reason',
      'revision',
      'fence',
      'due_at',
      'claim_due_at',
      'lease_owner',
      'lease_token',
      'lease_expires_at',
      'updated_at',
      'priority',
      'retries',
      'trace_parent',
      'group_key',
      'rate_limited',
      'parent_run_id',
      'parent_page',
      'children',
    ]);
    expect(await fillfactor(schema)).toEqual(['fillfactor=50']);
  });

  /**
   * Runs written by this version, copied into a schema that a version before migration `tag` left (the migrations
   * before it applied, none after): answers both schemas and the runs started.
   */
  async function olderSchemaWithRuns(tag: string) {
    const source = schemaName();
    const producer = createQueue({ store: postgresStore(db.options(source)), runtime: { mode: 'producer' } });
    const task = producer.define(DEFINITION);
    await producer.ready();
    const started = [
      await task.start({ query: { i: 1 } }),
      await task.start({ query: { i: 2 }, idempotencyKey: 'k-2' }),
      await task.start({ query: { i: 3 } }),
    ];
    await producer.close();

    const older = schemaName();
    const before = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).length - migrationsFrom(tag);
    expect(before).toBeGreaterThan(0);
    await applyMigrations({ db: drizzleOf(older), listener: null, close: async () => {} }, older, before);
    // The columns the older schema has: later migrations add columns of their own (with defaults).
    const names = (await columnOrder(older)).map((name) => `"${name}"`).join(', ');
    for (const table of ['docket_definitions', 'docket_history']) {
      await db.query(`INSERT INTO "${older}".${table} SELECT * FROM "${source}".${table}`);
    }
    await db.query(`INSERT INTO "${older}".docket_runs (${names}) SELECT ${names} FROM "${source}".docket_runs`);
    return { source, older, started };
  }

  /** How many migrations there are from the one tagged `tag` on, that one included. */
  function migrationsFrom(tag: string): number {
    const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as {
      entries: { tag: string }[];
    };
    const index = journal.entries.findIndex((entry) => entry.tag === tag);
    expect(index).toBeGreaterThan(0);
    return journal.entries.length - index;
  }

  /** After `open()` of the older schema: every run and its history read back as the source has them. */
  async function expectSameRuns(source: string, older: string, started: readonly { runId: string }[]) {
    const sourceStore = postgresStore(db.options(source));
    const migrated = postgresStore(db.options(older));
    await sourceStore.open();
    await migrated.open();
    for (const run of started) {
      expect(await migrated.getRun('default', run.runId)).toEqual(await sourceStore.getRun('default', run.runId));
      expect(await migrated.getHistory('default', run.runId)).toEqual(
        await sourceStore.getHistory('default', run.runId),
      );
    }
    await sourceStore.close();
    await migrated.close();
  }

  /** The migrated schema's indexes came back: the idempotency key still holds, and a worker finishes every run. */
  async function expectStillClaimable(schema: string, started: readonly { runId: string }[]) {
    const queue = createQueue({ store: postgresStore(db.options(schema)) });
    const done: number[] = [];
    const consumer = queue.define(DEFINITION, {
      execute(ctx) {
        done.push((ctx.query as { i: number }).i);
        return ctx.end();
      },
    });
    try {
      await queue.ready();
      const again = await consumer.start({ query: { i: 2 }, idempotencyKey: 'k-2' });
      expect(again.runId).toBe(started[1]?.runId);
      await waitFor(() => done.length === 3, 'the three migrated runs to run');
      expect(done.sort()).toEqual([1, 2, 3]);
    } finally {
      await queue.close();
    }
  }

  /** Each text column that an index of `schema` keys on, with its collation and the index's, as `table.column`. */
  async function indexedTextColumns(schema: string) {
    return db.query<{ column: string; collation: string; indexCollation: string }>(
      `SELECT t.relname || '.' || a.attname AS column, ac.collname AS collation, ic.collname AS "indexCollation"
         FROM pg_index i
         JOIN pg_class t ON t.oid = i.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace
         JOIN LATERAL unnest(i.indkey::int2[], i.indcollation::oid[]) AS k(attnum, coll) ON true
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
         JOIN pg_collation ac ON ac.oid = a.attcollation
         JOIN pg_collation ic ON ic.oid = k.coll
        WHERE n.nspname = $1 AND a.atttypid = 'text'::regtype
        ORDER BY 1`,
      [schema],
    );
  }

  it('moves the runs of a schema an older version migrated into the new layout, unchanged and still claimable', async () => {
    const { source, older, started } = await olderSchemaWithRuns('0002_run_row_layout');
    expect(await fillfactor(older)).toBeNull();
    expect((await columnOrder(older)).indexOf('status')).toBeLessThan((await columnOrder(older)).indexOf('query'));
    await expectSameRuns(source, older, started);
    expect(await columnOrder(older)).toEqual(columnsOf(docketRuns).map((c) => c.name));
    expect(await fillfactor(older)).toEqual(['fillfactor=50']);
    await expectStillClaimable(older, started);
  });

  it('compares every text column an index keys on byte by byte (COLLATE "C"), in the column and in the index', async () => {
    const schema = schemaName();
    const store = postgresStore(db.options(schema));
    await store.open();
    await store.close();
    const columns = await indexedTextColumns(schema);
    // The keys of every table: runs, history, callback events, definitions, commands and settings.
    for (const key of [
      'docket_runs.run_id',
      'docket_runs.task_name',
      'docket_history.run_id',
      'docket_events.status',
      'docket_definitions.name',
      'docket_commands.command_id',
      'docket_settings.key',
    ]) {
      expect(columns.map((c) => c.column)).toContain(key);
    }
    expect(columns.filter((c) => c.collation !== 'C' || c.indexCollation !== 'C')).toEqual([]);
  });

  it('moves the key columns of a schema an older version migrated to COLLATE "C", its runs unchanged and still claimable', async () => {
    const { source, older, started } = await olderSchemaWithRuns('0003_key_collation');
    const before = await indexedTextColumns(older);
    expect(before.length).toBeGreaterThan(10);
    expect(before.filter((c) => c.collation === 'C')).toEqual([]);
    await expectSameRuns(source, older, started);
    // Later migrations add tables of their own, created with COLLATE "C" keys from the start.
    const after = await indexedTextColumns(older);
    // (A column a later index also keys on is listed once per index.)
    for (const column of before) {
      expect(after).toContainEqual({ column: column.column, collation: 'C', indexCollation: 'C' });
    }
    expect(after.filter((c) => c.collation !== 'C' || c.indexCollation !== 'C')).toEqual([]);
    // No table was rewritten into another shape: the run row keeps its layout and fillfactor.
    expect(await columnOrder(older)).toEqual(columnsOf(docketRuns).map((c) => c.name));
    expect(await fillfactor(older)).toEqual(['fillfactor=50']);
    await expectStillClaimable(older, started);
  });

  it('gives a schema an older version migrated the indexes of a new one: one lease index, by task and group', async () => {
    const { older, started } = await olderSchemaWithRuns('0014_lease_index');
    expect(await runIndexes(older)).toContain('docket_runs_leased');
    const fresh = schemaName();
    const store = postgresStore(db.options(fresh));
    await store.open();
    await store.close();
    const migrated = postgresStore(db.options(older));
    await migrated.open();
    await migrated.close();
    const indexes = await runIndexes(fresh);
    expect(indexes).toContain(
      'docket_runs_lease ON docket_runs USING btree (namespace, task_name, group_key, lease_expires_at) WHERE (lease_expires_at IS NOT NULL)',
    );
    expect(indexes).not.toContain('docket_runs_leased');
    expect(await runIndexes(older)).toEqual(indexes);
    await expectStillClaimable(older, started);
  });

  /** The definitions of the runs table's indexes in `schema`, without the schema's name, in name order. */
  async function runIndexes(schema: string): Promise<string> {
    const rows = await db.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = 'docket_runs' ORDER BY indexname`,
      [schema],
    );
    return rows
      .map((row) =>
        row.indexdef
          .replace(/^CREATE (UNIQUE )?INDEX /, '')
          .replaceAll(`"${schema}".`, '')
          .replaceAll(`${schema}.`, ''),
      )
      .join('\n');
  }

  // Prepared statements live on the server connections of processes that keep running while another process
  // migrates; PGlite has no such connections. One connection, so that the second claim meets the first's statement.
  it.runIf(DATABASE_URL)(
    'keeps claiming on a connection that prepared its claims after the runs table is rebuilt in another column order',
    async () => {
      const schema = schemaName();
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      const store = postgresStore({ pool, schema });
      const claim = () => {
        const now = Date.now();
        return store.claimDue({
          namespace: 'default',
          tasks: [DEFINITION],
          limit: 8,
          now,
          plainClaim: { actor: 'worker:test', leaseExpiresAt: now + 30_000, at: new Date(now).toISOString() },
          plan: () => null,
        });
      };
      try {
        await store.open();
        expect(await claim()).toEqual([]);
        // What a later migration may do: the same columns, in the reverse order, in a new table of the same name.
        const reversed = columnsOf(docketRuns)
          .map((c) => `"${c.name}"`)
          .reverse()
          .join(', ');
        await db.query(`BEGIN;
          CREATE TABLE "${schema}".docket_runs_next AS SELECT ${reversed} FROM "${schema}".docket_runs;
          DROP TABLE "${schema}".docket_runs;
          ALTER TABLE "${schema}".docket_runs_next RENAME TO docket_runs;
          COMMIT`);
        expect((await columnOrder(schema))[0]).toBe(columnsOf(docketRuns).at(-1)?.name);
        expect(await claim()).toEqual([]);
      } finally {
        await store.close();
        await pool.end();
      }
    },
  );
});
