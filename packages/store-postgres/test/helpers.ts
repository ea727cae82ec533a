import { randomBytes } from 'node:crypto';
import { createQueue, type TaskDefinition } from '@docket/core';
import { type ConformanceHarness, runStoreConformance } from '@docket/core/conformance';
import { waitFor } from '@docket/core/testing';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
// @ts-expect-error Plain JavaScript, shared with the global setup.
import { createTestSchema } from '../../../tooling/config/postgres-schemas.mjs';
import { type PostgresTransaction, postgresStore } from '../src/index.js';

/** The server CI provides; without it the suite runs on PGlite, so `pnpm test` passes on a laptop. */
export const DATABASE_URL = process.env.DOCKET_TEST_DATABASE_URL;

/** A pool on the server whose clients push the text of every query they send onto `log`. */
export function loggingPool(log: string[]): pg.Pool {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0] as string | { text?: string };
      log.push(typeof first === 'string' ? first : (first?.text ?? ''));
      return query(...args);
    };
  });
  return pool;
}

/** A deferred constraint trigger that makes COMMIT itself slow (`seconds`, 2 by default) after `event` on the schema's runs. */
export async function slowCommits(db: pg.Pool, schema: string, event: 'INSERT' | 'UPDATE', seconds = 2): Promise<void> {
  await db.query(`CREATE OR REPLACE FUNCTION "${schema}".slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_sleep(${Number(seconds)}); RETURN NULL; END $$`);
  await db.query(`CREATE CONSTRAINT TRIGGER slow_commit AFTER ${event} ON "${schema}".docket_runs
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "${schema}".slow_commit()`);
}

/** Waits until a commit is inside that trigger, then terminates its backend. */
export async function terminateSlowCommit(db: pg.Pool): Promise<void> {
  const sleeping = `FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND pid <> pg_backend_pid()`;
  await waitFor(
    async () => (await db.query(`SELECT count(*)::int AS n ${sleeping}`)).rows[0].n > 0,
    'the commit to be under way',
    10_000,
  );
  await db.query(`SELECT pg_terminate_backend(pid) ${sleeping}`);
}

/** A producer queue on the server's `schema` that can start runs of `definition`, ready. */
export async function serverProducer(schema: string, definition: TaskDefinition) {
  const queue = createQueue({
    store: postgresStore({ connectionString: DATABASE_URL as string, schema }),
    runtime: { mode: 'producer' },
  });
  const task = queue.define(definition);
  await queue.ready();
  return { queue, task };
}

/** A fresh schema name for one test. */
/** A node of an `EXPLAIN (FORMAT JSON)` plan, with the fields the plan tests read. */
export type PlanNode = {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
};

/** A statement parameter as an SQL literal (strings, numbers and arrays of strings, as the flow statements bind). */
function literal(client: pg.Client, value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `ARRAY[${value.map((v) => client.escapeLiteral(String(v))).join(', ')}]::text[]`;
  return client.escapeLiteral(String(value));
}

/**
 * Every node of a statement's generic plan on the real server (the plan a prepared statement settles on after five
 * executions), over `task`'s claims in `schema` as a minute of claims of 100 groups leaves them, before any statistics
 * are gathered: with every scan estimated alike, the planner must still find the index the statement is meant for.
 */
export async function claimPlan(
  client: pg.Client,
  schema: string,
  task: string,
  statement: { text: string; params: readonly unknown[] },
): Promise<PlanNode[]> {
  await client.query(
    `INSERT INTO "${schema}".docket_flow_claims (namespace, task_name, scope, group_key, at, n)
     SELECT 'default', $1, 'group', 'g' || (i % 100), i * 10, 1 FROM generate_series(1, 6000) AS i`,
    [task],
  );
  await client.query(`PREPARE planned AS ${statement.text}`);
  await client.query('SET plan_cache_mode = force_generic_plan');
  const args = statement.params.map((value) => literal(client, value)).join(', ');
  const explained = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
    `EXPLAIN (FORMAT JSON) EXECUTE planned(${args})`,
  );
  const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
  return nodes(explained.rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode);
}

/** The index scans of a plan (plain, index-only or bitmap). */
export const indexScans = (plan: readonly PlanNode[]) =>
  plan.filter((node) => /Index (Only )?Scan/.test(node['Node Type']));

/** Drops a schema and everything in it, on a connection of its own. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const admin = new pg.Client(url);
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.end();
}

/** A schema name no other test uses. */
export const freshSchema = () => `docket_t_${randomBytes(6).toString('hex')}`;

export interface Backend {
  options(schema: string): Parameters<typeof postgresStore>[0];
  query<T>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** One backend per test file: a pool on the real server, or one PGlite instance. */
export async function backend(): Promise<Backend> {
  if (DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20 });
    return {
      options: (schema) => ({ pool, schema }),
      query: async (text, params) => (await pool.query(text, params as unknown[])).rows,
      close: () => pool.end(),
    };
  }
  const lite = new PGlite();
  await lite.waitReady;
  return {
    options: (schema) => ({ pglite: lite, schema }),
    query: async <T>(text: string, params?: unknown[]) => (await lite.query<T>(text, params)).rows,
    close: () => lite.close(),
  };
}

/**
 * The test backend for the enclosing `describe`: opened before its tests and closed after them; `db()` answers it
 * once open. The functions pushed on `cleanups` run after each test, the last pushed first.
 */
export function backendForTests(): { db: () => Backend; cleanups: (() => Promise<void>)[] } {
  let db: Backend | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    db = await backend();
  });
  afterAll(async () => {
    await db?.close();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    db: () => {
      if (db === undefined) throw new Error('the backend opens in beforeAll');
      return db;
    },
    cleanups,
  };
}

/** A conformance harness on a fresh schema of `db`, with an app table for effects and raw readers. */
export async function postgresHarness(db: Backend): Promise<ConformanceHarness<PostgresTransaction>> {
  const schema = freshSchema();
  await createTestSchema((text: string) => db.query(text), schema);
  await db.query(`CREATE TABLE "${schema}".app_rows (id serial PRIMARY KEY, key text NOT NULL)`);
  const store = postgresStore(db.options(schema));
  return {
    store,
    secondStore: () => postgresStore(db.options(schema)),
    writeAppRow: (tx, key) =>
      tx.execute(sql`INSERT INTO ${sql.raw(`"${schema}".app_rows`)} (key) VALUES (${key})`) as never,
    countAppRows: async (key) =>
      Number(
        (await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".app_rows WHERE key = $1`, [key]))[0]?.n,
      ),
    raw: {
      run: async (runId) =>
        (
          await db.query<{ status: string; revision: number }>(
            `SELECT status, revision FROM "${schema}".docket_runs WHERE run_id = $1`,
            [runId],
          )
        )[0] ?? null,
      historyCount: async (runId) =>
        Number(
          (
            await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".docket_history WHERE run_id = $1`, [
              runId,
            ])
          )[0]?.n,
        ),
    },
    cleanup: async () => {
      await db.query(`DROP SCHEMA "${schema}" CASCADE`);
    },
  };
}

/** The parts the conformance suite is split into for this store (a file each, so that the runner overlaps them). */
export const CONFORMANCE_PARTS = 3;

/** Declares part `index` of the conformance suite on the test backend (the server, or PGlite without one). */
export function pgConformancePart(index: number): void {
  let db: Awaited<ReturnType<typeof backend>>;
  beforeAll(async () => {
    db = await backend();
  });
  afterAll(async () => {
    await db.close();
  });
  runStoreConformance(DATABASE_URL ? 'postgres (server)' : 'postgres (PGlite)', () => postgresHarness(db), {
    part: { index, of: CONFORMANCE_PARTS },
  });
}
