import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createQueue, isDocketError } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER, postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema, serverProducer, slowCommits, terminateSlowCommit } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/process.mjs', import.meta.url));
const DEFINITION = { name: 'mp', version: '1', policy: { attempts: 5, backoff: { baseMs: 5, maxMs: 50 } } } as const;

// These tests need a real server shared by several processes; .ci/run provides one (DOCKET_TEST_DATABASE_URL).
describe.runIf(DATABASE_URL)('several processes on one PostgreSQL server', () => {
  let pool: pg.Pool;
  const children: { proc: ChildProcess; lines: string[]; exited: Promise<number | null> }[] = [];
  const schemas: string[] = [];

  beforeAll(() => {
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
      await child.exited;
    }
  });
  afterAll(async () => {
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  function spawnChild(args: string[]) {
    const proc = spawn(process.execPath, [FIXTURE, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines: string[] = [];
    let buffer = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      lines.push(...parts);
    });
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    const child = { proc, lines, exited };
    children.push(child);
    return child;
  }

  async function setupSchema() {
    const schema = freshSchema();
    schemas.push(schema);
    await pool.query(`CREATE SCHEMA "${schema}"`);
    await pool.query(`CREATE TABLE "${schema}".app_rows (id serial PRIMARY KEY, key text NOT NULL)`);
    return schema;
  }

  const producer = (schema: string) => serverProducer(schema, DEFINITION);

  it('migrates once when 4 processes call ready() at once on an empty schema', async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const migrators = [0, 1, 2, 3].map(() => spawnChild(['migrate', DATABASE_URL as string, schema]));
    expect(await Promise.all(migrators.map((m) => m.exited))).toEqual([0, 0, 0, 0]);
    const applied = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".__docket_migrations`);
    expect(applied.rows[0]).toEqual({ n: readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).length });
    // Each migration once, and every table there.
    const tables = await pool.query(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
      [schema],
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual([
      '__docket_migrations',
      'docket_changes',
      'docket_commands',
      'docket_definitions',
      'docket_events',
      'docket_feed',
      'docket_feed_floors',
      'docket_flow_claims',
      'docket_flow_groups',
      'docket_history',
      'docket_run_counts',
      'docket_runs',
      'docket_schedules',
      'docket_settings',
      'docket_settled_minutes',
      'docket_tasks',
    ]);
  }, 60_000);

  // Each run's effect is a commit of its own, so the server's WAL flushes set the pace (a few hundred per second
  // here): 2,000 runs keep eight processes racing for the same rows long enough to show a double execution.
  it('8 worker processes run 2,000 runs: exactly 2,000 effect rows, every run success', async () => {
    const schema = await setupSchema();
    const { queue, task } = await producer(schema);
    for (let i = 0; i < 2_000; i += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, j) => task.start({ query: { i: i + j } })));
    }
    for (let w = 0; w < 8; w++) spawnChild(['worker', DATABASE_URL as string, schema, `w${w}`]);
    await waitFor(
      async () =>
        (await pool.query(`SELECT count(*)::int AS n FROM "${schema}".docket_runs WHERE status = 'success'`)).rows[0]
          .n === 2_000,
      'all 2,000 runs to succeed',
      240_000,
    );
    // Every worker stops through its SIGTERM handler, also one that joined after the others finished the work.
    await waitFor(() => children.every((c) => c.lines.includes('ready')), 'every worker to be ready');
    for (const child of children) child.proc.kill('SIGTERM');
    expect(await Promise.all(children.map((c) => c.exited))).toEqual(Array(8).fill(0));
    const rows = await pool.query(`SELECT count(*)::int AS n, count(DISTINCT key)::int AS k FROM "${schema}".app_rows`);
    expect(rows.rows[0]).toEqual({ n: 2_000, k: 2_000 });
    const broken = await pool.query(
      `SELECT r.run_id FROM "${schema}".docket_runs r WHERE r.revision <> (SELECT count(*) FROM "${schema}".docket_history h WHERE h.run_id = r.run_id)`,
    );
    expect(broken.rows).toEqual([]);
    const workers = await pool.query(
      `SELECT count(DISTINCT actor)::int AS n FROM "${schema}".docket_history WHERE reason = 'CLAIMED'`,
    );
    expect(workers.rows[0].n).toBeGreaterThan(1);
    await queue.close();
  }, 300_000);

  it('recovers a run whose worker was SIGKILLed mid-page; its effect lands exactly once', async () => {
    const schema = await setupSchema();
    const { queue, task } = await producer(schema);
    const { runId } = await task.start({ query: { crash: true } });
    const hanging = spawnChild(['hang', DATABASE_URL as string, schema, 'doomed']);
    await waitFor(() => hanging.lines.includes(`started ${runId}`), 'the page to start', 30_000);
    // Killed once its claim is committed (a held claim commits at the end of the turn its page started in): a kill
    // before that leaves no claim, and the run is simply claimed again, with no lease to recover.
    await waitFor(async () => (await task.get(runId))?.status === 'running', 'the claim to commit', 30_000);
    hanging.proc.kill('SIGKILL');
    await hanging.exited;
    spawnChild(['worker', DATABASE_URL as string, schema, 'survivor']);
    const info = await waitFor(
      async () => {
        const current = await task.get(runId);
        return current?.status === 'success' ? current : null;
      },
      'the survivor to finish the run',
      30_000,
    );
    expect(info.recoveries).toBe(1);
    expect((await task.history(runId)).map((e) => e.reason)).toEqual([
      'STARTED',
      'CLAIMED',
      'LEASE_EXPIRED',
      'CLAIMED',
      'COMPLETED',
    ]);
    const rows = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".app_rows WHERE key = $1`, [runId]);
    expect(rows.rows[0]).toEqual({ n: 1 });
    await queue.close();
  }, 60_000);

  it('raises OUTCOME_UNKNOWN when the backend is terminated during a commit, and a read tells what happened', async () => {
    const schema = await setupSchema();
    const { queue, task } = await producer(schema);
    // A slow COMMIT, so the backend can be terminated while it commits.
    await slowCommits(pool, schema, 'INSERT');
    const pending = task.start({ query: { n: 1 }, idempotencyKey: 'unknown-1' }).then(
      () => null,
      (error: unknown) => error,
    );
    await terminateSlowCommit(pool);
    const error = await pending;
    expect(isDocketError(error, 'OUTCOME_UNKNOWN'), String(error)).toBe(true);
    const unknown = error as { runId: string; idempotencyKey: string; outcomeKnown: boolean; operation: string };
    expect(unknown).toMatchObject({ idempotencyKey: 'unknown-1', outcomeKnown: false, operation: 'task.start' });
    expect(unknown.runId).toMatch(/^[0-9a-f]{32}$/);
    // The caller reads before retrying: the terminated commit did not happen, so the run does not exist.
    await pool.query(`DROP TRIGGER slow_commit ON "${schema}".docket_runs`);
    expect(await task.get(unknown.runId)).toBeNull();
    const retried = await task.start({ query: { n: 1 }, idempotencyKey: 'unknown-1' });
    expect(retried.created).toBe(true);
    await queue.close();
  }, 60_000);

  it('raises OUTCOME_UNKNOWN for a batched write of a run in flight when its one-trip commit is cut off', async () => {
    const schema = await setupSchema();
    const store = postgresStore({ connectionString: DATABASE_URL as string, schema });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const worker = createQueue({ store, runtime: { concurrency: 1 }, protocol: { pollMs: 10 } });
    const task = worker.define(DEFINITION, {
      async execute(ctx) {
        await gate;
        return ctx.end();
      },
    });
    await worker.ready();
    try {
      const { runId } = await task.start({ query: { n: 2 } });
      await waitFor(async () => (await task.get(runId))?.status === 'running', 'the run to be claimed', 10_000);
      await slowCommits(pool, schema, 'UPDATE');
      // A budget reservation: pure, for a run this store holds, so it takes the one-round-trip path.
      const reserved = store
        .transact(
          'default',
          runId,
          (_tx, current) => ({
            write: current && {
              run: { ...current, modelCallsUsed: current.modelCallsUsed + 1 },
              history: [],
              events: [],
            },
            value: null,
          }),
          { pure: true },
        )
        .then(
          () => null,
          (error: unknown) => error,
        );
      await terminateSlowCommit(pool);
      const error = await reserved;
      expect(isDocketError(error, 'OUTCOME_UNKNOWN'), String(error)).toBe(true);
      expect(error).toMatchObject({ runId, outcomeKnown: false, operation: 'store.transact' });
      await pool.query(`DROP TRIGGER slow_commit ON "${schema}".docket_runs`);
      // Read before retrying: the cut-off commit did not happen.
      const { rows } = await pool.query(`SELECT model_calls_used FROM "${schema}".docket_runs WHERE run_id = $1`, [
        runId,
      ]);
      expect(rows[0]).toEqual({ model_calls_used: 0 });
    } finally {
      release();
      await worker.close();
    }
  }, 60_000);
});
