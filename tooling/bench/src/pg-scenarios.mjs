// PostgreSQL measurements, one per process: `node pg-scenarios.mjs <name> <json args>` prints one JSON line.
// Every system gets the same server, the same workload (a ~100-byte payload, a handler that does nothing) and its
// own schema, dropped at the end.

import { createQueue } from '@docket/core';
import { postgresStore } from '@docket/store-postgres';
import pg from 'pg';
import { definition, latch, latencyRecorder, machineBusyMs, pacedSends, payload, rate } from './common.mjs';
import { medianFeedMs, medianPagesMs, medianStatsMs } from './stats-timing.mjs';

const [name, rawArgs] = process.argv.slice(2);
const args = JSON.parse(rawArgs ?? '{}');
const url = args.url;

async function dropSchema(schema) {
  const client = new pg.Client(url);
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

/** Enqueues `n` payloads in chunks of `size` through `add(payloads)`; answers the rate per second. */
async function enqueueInChunks(n, size, add) {
  const t = performance.now();
  for (let i = 0; i < n; i += size) {
    const chunk = [];
    for (let j = i; j < Math.min(n, i + size); j++) chunk.push(payload(j));
    await add(chunk);
  }
  return rate(n, performance.now() - t);
}

/**
 * Starts counting what a processing phase costs: `perRun(n)` answers, per run, the CPU microseconds of this process
 * (the worker) and of the rest of the machine (the server, on a machine that runs nothing else; `null` off Linux),
 * and the bytes of WAL the server wrote.
 */
async function costMeter() {
  const client = new pg.Client(url);
  await client.connect();
  const lsn = async () => (await client.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn;
  const startLsn = await lsn();
  const own = process.cpuUsage();
  const busy = machineBusyMs();
  return {
    async perRun(n) {
      const used = process.cpuUsage(own);
      const end = machineBusyMs();
      const endLsn = await lsn();
      const wal = await client.query('SELECT pg_wal_lsn_diff($1, $2)::float8 AS bytes', [endLsn, startLsn]);
      await client.end();
      const ownUs = used.user + used.system;
      const rest = busy === null || end === null ? null : Math.max(0, (end - busy) * 1000 - ownUs);
      return {
        worker: Math.round(ownUs / n),
        rest: rest === null ? null : Math.round(rest / n),
        walBytes: Math.round(wal.rows[0].bytes / n),
      };
    },
  };
}

// --- Docket ---------------------------------------------------------------------------------------------------

/**
 * Starts `n` runs on a fresh `schema` from a producer of its own, `size` at a time through `add(task, queries)`;
 * answers the rate.
 */
async function docketEnqueueWith(n, schema, size, add) {
  await dropSchema(schema);
  const producer = createQueue({
    store: postgresStore({ connectionString: url, schema }),
    runtime: { mode: 'producer' },
  });
  const task = producer.define(definition);
  await producer.ready();
  const enqueue = await enqueueInChunks(n, size, (chunk) => add(task, chunk));
  await producer.close();
  return enqueue;
}

/** Single starts, 500 awaited together: the batched commit's rate. */
const docketEnqueue = (n, schema) =>
  docketEnqueueWith(n, schema, 500, (task, chunk) => Promise.all(chunk.map((query) => task.start({ query }))));

/** `startMany` of 100 runs per call, one call after another; answers the rate. */
async function docketStartMany({ n, schema }) {
  const enqueue = await docketEnqueueWith(n, schema, 100, (task, chunk) =>
    task.startMany(chunk.map((query) => ({ query }))),
  );
  await dropSchema(schema);
  return { enqueue };
}

async function docketProcess({ n, concurrency, schema }) {
  const enqueue = await docketEnqueue(n, schema);

  const all = latch();
  let done = 0;
  const queue = createQueue({
    store: postgresStore({ connectionString: url, schema }),
    runtime: { mode: 'consumer', concurrency },
  });
  queue.define(definition, {
    execute(ctx) {
      if (++done === n) all.open();
      return ctx.end();
    },
  });
  const cost = await costMeter();
  const t = performance.now();
  await queue.ready();
  await all.done;
  const processed = rate(n, performance.now() - t);
  const perRun = await cost.perRun(n);
  await queue.close();
  await dropSchema(schema);
  return { enqueue, rate: processed, perRun };
}

async function docketLatency({ count, perSecond, schema }) {
  await dropSchema(schema);
  const latencies = latencyRecorder(count);
  const consumer = createQueue({
    store: postgresStore({ connectionString: url, schema }),
    runtime: { mode: 'consumer', concurrency: 8 },
  });
  consumer.define(definition, {
    execute(ctx) {
      latencies.record(ctx.query.i, performance.timeOrigin + performance.now() - ctx.query.t);
      return ctx.end();
    },
  });
  await consumer.ready();
  // A second queue on its own pool: the wake-up travels through the server (NOTIFY), as between two machines.
  const producer = createQueue({
    store: postgresStore({ connectionString: url, schema }),
    runtime: { mode: 'producer' },
  });
  const task = producer.define(definition);
  await producer.ready();
  await pacedSends(count, perSecond, (i) =>
    task.start({ query: { ...payload(i), t: performance.timeOrigin + performance.now() } }),
  );
  await latencies.done;
  await producer.close();
  await consumer.close();
  await dropSchema(schema);
  return latencies.result();
}

// --- Raw SKIP LOCKED ------------------------------------------------------------------------------------------

async function rawProcess({ n, perTransaction, workers, schema }) {
  await dropSchema(schema);
  const pool = new pg.Pool({ connectionString: url, max: workers + 1 });
  await pool.query(`CREATE SCHEMA "${schema}"`);
  await pool.query(
    `CREATE TABLE "${schema}".jobs (id bigserial PRIMARY KEY, payload jsonb NOT NULL, status text NOT NULL,
       run_at timestamptz NOT NULL DEFAULT now());
     CREATE INDEX ON "${schema}".jobs (run_at) WHERE status = 'pending'`,
  );
  const enqueue = await enqueueInChunks(n, 1000, (chunk) =>
    pool.query(
      `INSERT INTO "${schema}".jobs (payload, status) SELECT p::jsonb, 'pending' FROM unnest($1::text[]) AS p`,
      [chunk.map((p) => JSON.stringify(p))],
    ),
  );
  const claim = `UPDATE "${schema}".jobs SET status = 'running' WHERE id IN (
      SELECT id FROM "${schema}".jobs WHERE status = 'pending' AND run_at <= now() ORDER BY run_at
      LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING id, payload`;
  const complete = `UPDATE "${schema}".jobs SET status = 'done' WHERE id = ANY($1::bigint[])`;
  let processed = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      const client = await pool.connect();
      try {
        for (;;) {
          const { rows } = await client.query({ name: 'claim', text: claim, values: [perTransaction] });
          if (rows.length === 0) return;
          await client.query({ name: 'complete', text: complete, values: [rows.map((r) => r.id)] });
          processed += rows.length;
        }
      } finally {
        client.release();
      }
    }),
  );
  const ms = performance.now() - t;
  if (processed !== n) throw new Error(`raw processed ${processed} of ${n}`);
  await pool.end();
  await dropSchema(schema);
  return { enqueue, rate: rate(n, ms) };
}

/**
 * The ceiling of Docket's own tables: runs started by Docket, then claimed and settled by a loop of plain SQL that
 * writes what a Docket worker with held claims writes for a single-page run whose handler settles at once: `BEGIN`
 * and the locking select of the claim reading the rows whole, then one statement that writes each run's final row
 * version with its two history rows (the claim's and the settle's), and `COMMIT`, with no JavaScript per run. Each of
 * `loops` loops claims `perTransaction` runs, settles them, and claims again.
 */
async function rawDocketTables({ n, perTransaction, loops, schema }) {
  const enqueue = await docketEnqueue(n, schema);
  const runs = `"${schema}".docket_runs`;
  const history = `"${schema}".docket_history`;
  const select = `SELECT * FROM ${runs} WHERE namespace = 'default' AND task_name = $1 AND task_version = $2
        AND claim_due_at IS NOT NULL AND claim_due_at <= $3 ORDER BY claim_due_at LIMIT $4 FOR UPDATE SKIP LOCKED`;
  const settle = `WITH u AS (UPDATE ${runs} SET status = 'success', reason = 'COMPLETED', revision = revision + 2,
        due_at = NULL, claim_due_at = NULL, fence = fence + 1, updated_at = $2
        WHERE run_id = ANY($1::text[]) RETURNING run_id, revision)
      INSERT INTO ${history} (run_id, seq, at, from_status, to_status, reason, actor)
      SELECT run_id, revision - 1 + k, $3, CASE k WHEN 0 THEN 'pending' ELSE 'running' END,
        CASE k WHEN 0 THEN 'running' ELSE 'success' END, CASE k WHEN 0 THEN 'CLAIMED' ELSE 'COMPLETED' END, $4
      FROM u, (VALUES (0), (1)) AS ks(k)`;
  const pool = new pg.Pool({ connectionString: url, max: loops });
  let processed = 0;
  const cost = await costMeter();
  const t = performance.now();
  await Promise.all(
    Array.from({ length: loops }, async () => {
      const client = await pool.connect();
      try {
        for (;;) {
          const now = Date.now();
          const at = new Date(now).toISOString();
          await client.query('BEGIN');
          const { rows } = await client.query({
            name: 'select',
            text: select,
            values: [definition.name, definition.version, now, perTransaction],
          });
          if (rows.length === 0) {
            await client.query('COMMIT');
            return;
          }
          await client.query({
            name: 'settle',
            text: settle,
            values: [rows.map((r) => r.run_id), Date.now(), at, 'raw'],
          });
          await client.query('COMMIT');
          processed += rows.length;
        }
      } finally {
        client.release();
      }
    }),
  );
  const processedRate = rate(n, performance.now() - t);
  const perRun = await cost.perRun(n);
  if (processed !== n) throw new Error(`raw processed ${processed} of ${n}`);
  await pool.end();
  await dropSchema(schema);
  return { enqueue, rate: processedRate, perRun };
}

// --- graphile-worker --------------------------------------------------------------------------------------------

/** A fresh graphile-worker schema with n jobs added by `addJobs` of 100: the rate they were added at. */
async function graphileFill(n, schema) {
  const { makeWorkerUtils } = await import('graphile-worker');
  await dropSchema(schema);
  const utils = await makeWorkerUtils({ connectionString: url, schema, logger: graphileLogger() });
  await utils.migrate();
  const enqueue = await enqueueInChunks(n, 100, (chunk) =>
    utils.addJobs(chunk.map((p) => ({ identifier: 'noop', payload: p }))),
  );
  await utils.release();
  return enqueue;
}

async function graphileProcess({ n, concurrency, localQueue, schema }) {
  const enqueue = await graphileFill(n, schema);
  const all = latch();
  let done = 0;
  const cost = await costMeter();
  const t = performance.now();
  const runner = await graphileRunner(
    schema,
    concurrency,
    async () => {
      if (++done === n) all.open();
    },
    {
      maxPoolSize: concurrency + 2,
      localQueue: { size: localQueue },
      completeJobBatchDelay: 0,
      failJobBatchDelay: 0,
    },
  );
  await all.done;
  const processed = rate(n, performance.now() - t);
  const perRun = await cost.perRun(n);
  await runner.stop();
  await dropSchema(schema);
  return { enqueue, rate: processed, perRun };
}

/** graphile-worker's `addJobs` of 100 alone, on a fresh schema: the peer of `docketStartMany`, measured in turns. */
async function graphileEnqueue({ n, schema }) {
  const enqueue = await graphileFill(n, schema);
  await dropSchema(schema);
  return { enqueue };
}

async function graphileLatency({ count, perSecond, concurrency, schema }) {
  const { makeWorkerUtils } = await import('graphile-worker');
  await dropSchema(schema);
  const utils = await makeWorkerUtils({ connectionString: url, schema, logger: graphileLogger() });
  await utils.migrate();
  const latencies = latencyRecorder(count);
  const runner = await graphileRunner(schema, concurrency, async (job) => {
    latencies.record(job.i, performance.timeOrigin + performance.now() - job.t); // the task receives the payload
  });
  await pacedSends(count, perSecond, (i) =>
    utils.addJob('noop', { ...payload(i), t: performance.timeOrigin + performance.now() }),
  );
  await latencies.done;
  await runner.stop();
  await utils.release();
  await dropSchema(schema);
  return latencies.result();
}

/** A graphile-worker runner for the `noop` task on `schema`, with the worker preset options given. */
async function graphileRunner(schema, concurrency, noop, worker = {}) {
  const { run } = await import('graphile-worker');
  return run({
    connectionString: url,
    schema,
    concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: graphileLogger(),
    taskList: { noop },
    preset: { worker },
  });
}

/** graphile-worker's logger, silenced (its per-job lines would measure the terminal). */
function graphileLogger() {
  return {
    scope: () => graphileLogger(),
    error() {},
    warn() {},
    info() {},
    debug() {},
  };
}

// --- pg-boss ------------------------------------------------------------------------------------------------------

/**
 * A started pg-boss on a fresh `schema`, with the `noop` queue. pg-boss 11 and later export the class by name and
 * take the queue's name as `insert`'s first argument; 10 exports it as default and reads the name from each job.
 */
async function startBoss(schema) {
  const module = await import('pg-boss');
  const PgBoss = module.PgBoss ?? module.default;
  await dropSchema(schema);
  const boss = new PgBoss({ connectionString: url, schema, supervise: false, schedule: false });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.createQueue('noop');
  const named = module.PgBoss !== undefined;
  /** Inserts one job of `noop` per payload, in one call. */
  const insert = (payloads) =>
    named
      ? boss.insert(
          'noop',
          payloads.map((data) => ({ data })),
        )
      : boss.insert(payloads.map((data) => ({ name: 'noop', data })));
  return { boss, insert };
}

/** pg-boss `insert` of 100 jobs per call on a fresh `schema`; answers the rate. */
async function pgBossEnqueue({ n, schema }) {
  const { boss, insert } = await startBoss(schema);
  const enqueue = await enqueueInChunks(n, 100, insert);
  await boss.stop({ graceful: false, wait: true, timeout: 10_000 });
  await dropSchema(schema);
  return { enqueue };
}

async function pgBossProcess({ n, batchSize, schema }) {
  const { boss, insert } = await startBoss(schema);
  const enqueue = await enqueueInChunks(n, 500, insert);
  const all = latch();
  let done = 0;
  const t = performance.now();
  await boss.work('noop', { batchSize, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    done += jobs.length;
    if (done >= n) all.open();
  });
  await all.done;
  const processed = rate(n, performance.now() - t);
  await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  await dropSchema(schema);
  return { enqueue, rate: processed };
}

async function pgBossLatency({ count, perSecond, schema }) {
  const { boss } = await startBoss(schema);
  const latencies = latencyRecorder(count);
  // Fetches of 500 every 0.5 s (pg-boss's shortest poll) keep up with 200 jobs/s; smaller fetches fall behind.
  await boss.work('noop', { batchSize: 500, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    for (const job of jobs) latencies.record(job.data.i, performance.timeOrigin + performance.now() - job.data.t);
  });
  await pacedSends(count, perSecond, (i) =>
    boss.send('noop', { ...payload(i), t: performance.timeOrigin + performance.now() }),
  );
  await latencies.done;
  await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  await dropSchema(schema);
  return latencies.result();
}

/**
 * `operator.stats()` with `finished` runs in the schema (written by one INSERT ... SELECT, counted by the store's
 * triggers as any write is): the median of 101 calls in ms, after 10 to warm up.
 */
async function docketStats({ finished, schema }) {
  const queue = createQueue({ store: postgresStore({ connectionString: url, schema }), runtime: { mode: 'producer' } });
  const task = queue.define(definition);
  await queue.ready();
  if (finished > 0) {
    const { runId } = await task.start({ query: payload(0) });
    const client = new pg.Client(url);
    await client.connect();
    const runs = `"${schema}".docket_runs`;
    const columns = (await client.query(`SELECT * FROM ${runs} LIMIT 0`)).fields.map((f) => `"${f.name}"`);
    const values = columns.map((c) =>
      c === '"run_id"'
        ? `lpad(to_hex(i), 32, '0')`
        : c === '"status"'
          ? `'success'`
          : c === '"reason"'
            ? `'COMPLETED'`
            : c === '"claim_due_at"' || c === '"due_at"' || c === '"idempotency_key"'
              ? 'NULL'
              : `r.${c}`,
    );
    await client.query(
      `INSERT INTO ${runs} (${columns.join(', ')}) SELECT ${values.join(', ')} FROM ${runs} r, generate_series(1, $1) AS i WHERE r.run_id = $2`,
      [finished, runId],
    );
    await client.query(`DELETE FROM ${runs} WHERE run_id = $1`, [runId]);
    // Three history entries a run, which the trigger stages in the changes feed; then one call gives them positions.
    await client.query(
      `INSERT INTO "${schema}".docket_history (run_id, seq, at, from_status, to_status, reason, actor)
       SELECT r.run_id, s.seq, '2026-01-01T00:00:00.000Z', s.from_status, s.to_status, s.reason, 'bench'
       FROM ${runs} r, (VALUES (1, NULL, 'pending', 'STARTED'), (2, 'pending', 'running', 'CLAIMED'),
         (3, 'running', 'success', 'COMPLETED')) AS s(seq, from_status, to_status, reason)`,
    );
    await client.query(`DELETE FROM "${schema}".docket_history WHERE run_id = $1`, [runId]);
    await client.query(`SELECT "${schema}".docket_sequence_changes($1)`, [finished * 3 + 10]);
    await client.query(`VACUUM ANALYZE "${schema}".docket_changes`);
    await client.query(`VACUUM ANALYZE ${runs}`);
    await client.end();
  }
  const ms = await medianStatsMs(queue);
  const pages = await medianPagesMs(queue);
  const feedMs = await medianFeedMs(queue);
  const stats = await queue.operator.stats();
  if (stats.byStatus.success !== finished) throw new Error(`counted ${stats.byStatus.success} of ${finished}`);
  await queue.close();
  await dropSchema(schema);
  return { ms, ...pages, feedMs };
}

const scenarios = {
  docketStats,
  docketProcess,
  docketStartMany,
  graphileEnqueue,
  pgBossEnqueue,
  docketLatency,
  rawProcess,
  rawDocketTables,
  graphileProcess,
  graphileLatency,
  pgBossProcess,
  pgBossLatency,
};

const result = await scenarios[name]({ ...args, schema: `bench_${name.toLowerCase()}_${process.pid}` });
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
