// One benchmark measurement per process: `node scenarios.mjs <name> <json args>` prints one JSON line.
// Every system gets the same workload: a ~100-byte payload and a handler that does nothing.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue } from '@docket/core';
import { otelTelemetry } from '@docket/otel';
import { sqliteStore } from '@docket/store-sqlite';
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import Database from 'better-sqlite3';
import { definition, latencyRecorder, pacedSends, payload, rate } from './common.mjs';
import { docketStartsLoop, docketWritesLoop } from './sqlite-twin.mjs';
import { medianFeedMs, medianPagesMs, medianStatsMs } from './stats-timing.mjs';

const [name, rawArgs] = process.argv.slice(2);
const args = JSON.parse(rawArgs ?? '{}');
const tempFile = () => join(mkdtempSync(join(tmpdir(), 'docket-bench-')), 'bench.sqlite');

function rawDb(filename) {
  const db = new Database(filename);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(
    `CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, payload TEXT NOT NULL, status TEXT NOT NULL, run_at INTEGER NOT NULL);
     CREATE INDEX IF NOT EXISTS jobs_due ON jobs (status, run_at);`,
  );
  return db;
}

async function docketStarts({ n }) {
  const queue = createQueue({ store: sqliteStore({ filename: tempFile() }), runtime: { mode: 'producer' } });
  const task = queue.define(definition);
  await queue.ready();
  const t = performance.now();
  for (let i = 0; i < n; i++) await task.start({ query: payload(i) });
  const ms = performance.now() - t;
  await queue.close();
  return { rate: rate(n, ms) };
}

function rawStarts({ n }) {
  const db = rawDb(tempFile());
  const insert = db.prepare("INSERT INTO jobs (payload, status, run_at) VALUES (?, 'pending', ?)");
  const tx = db.transaction((p) => insert.run(p, Date.now()));
  const t = performance.now();
  for (let i = 0; i < n; i++) tx.immediate(JSON.stringify(payload(i)));
  return { rate: rate(n, performance.now() - t) };
}

/** `startMany` of `per` runs per call, one call after another. */
async function docketStartMany({ n, per }) {
  const queue = createQueue({ store: sqliteStore({ filename: tempFile() }), runtime: { mode: 'producer' } });
  const task = queue.define(definition);
  await queue.ready();
  const t = performance.now();
  for (let i = 0; i < n; i += per) {
    const inputs = [];
    for (let j = i; j < Math.min(n, i + per); j++) inputs.push({ query: payload(j) });
    await task.startMany(inputs);
  }
  const ms = performance.now() - t;
  await queue.close();
  return { rate: rate(n, ms) };
}

/** The raw twin of `docketStartMany`: `per` one-row inserts per transaction. */
function rawStartMany({ n, per }) {
  const db = rawDb(tempFile());
  const insert = db.prepare("INSERT INTO jobs (payload, status, run_at) VALUES (?, 'pending', ?)");
  const tx = db.transaction((from, to) => {
    for (let i = from; i < to; i++) insert.run(JSON.stringify(payload(i)), Date.now());
  });
  const t = performance.now();
  for (let i = 0; i < n; i += per) tx.immediate(i, Math.min(n, i + per));
  return { rate: rate(n, performance.now() - t) };
}

/** The raw twin of `docketStartMany` on Docket's own tables: each run's row and history entry, `per` per transaction. */
async function rawDocketStarts({ n, per }) {
  const file = tempFile();
  const queue = createQueue({ store: sqliteStore({ filename: file }), runtime: { mode: 'producer' } });
  queue.define(definition);
  await queue.ready();
  await queue.close();
  const t = performance.now();
  docketStartsLoop(file, n, per, definition, payload);
  return { rate: rate(n, performance.now() - t) };
}

/** Fills `filename` with n pending Docket runs, as fast as the producer API allows (five priorities with `priorities`). */
async function fillDocket(filename, n, priorities = false) {
  const queue = createQueue({ store: sqliteStore({ filename }), runtime: { mode: 'producer' } });
  const task = queue.define(definition);
  await queue.ready();
  for (let i = 0; i < n; i += 1000) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) {
      batch.push(task.start({ query: payload(j), ...(priorities ? { priority: (j % 5) * 10 } : {}) }));
    }
    await Promise.all(batch);
  }
  await queue.close();
}

/**
 * The `telemetry` option of a processing run: none, `otelTelemetry()` with no SDK registered (OpenTelemetry's no-op),
 * or `otelTelemetry()` on the SDK with a batch span processor and a metric reader, exporting to a sink that drops
 * what it is given (the cost measured is Docket's and the SDK's, not an exporter's network).
 */
function telemetryOf(kind) {
  if (kind === 'otel-noop') return otelTelemetry();
  if (kind !== 'otel-sdk') return undefined;
  const drop = {
    export: (_items, done) => done({ code: 0 }),
    shutdown: async () => undefined,
    forceFlush: async () => undefined,
  };
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(drop)] });
  const reader = new PeriodicExportingMetricReader({
    exporter: { ...drop, selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE },
    exportIntervalMillis: 1000,
  });
  return otelTelemetry({ tracerProvider, meterProvider: new MeterProvider({ readers: [reader] }) });
}

async function docketProcess({ n, concurrency, filename, priorities, telemetry }) {
  const file = filename ?? tempFile();
  await fillDocket(file, n, priorities === true);
  let done = 0;
  let finish;
  const finished = new Promise((resolve) => {
    finish = resolve;
  });
  const traced = telemetryOf(telemetry);
  const queue = createQueue({
    store: sqliteStore({ filename: file }),
    runtime: { mode: 'consumer', concurrency },
    ...(traced === undefined ? {} : { telemetry: traced }),
  });
  queue.define(definition, {
    execute(ctx) {
      if (++done === n) finish();
      return ctx.end();
    },
  });
  const t = performance.now();
  await queue.ready();
  await finished;
  const ms = performance.now() - t;
  await queue.close();
  return { rate: rate(n, ms) };
}

function rawProcess({ n, perTransaction }) {
  const db = rawDb(tempFile());
  const insert = db.prepare("INSERT INTO jobs (payload, status, run_at) VALUES (?, 'pending', ?)");
  db.transaction(() => {
    for (let i = 0; i < n; i++) insert.run(JSON.stringify(payload(i)), Date.now());
  })();
  const claim = db.prepare(
    "UPDATE jobs SET status = 'running' WHERE id IN (SELECT id FROM jobs WHERE status = 'pending' AND run_at <= ? ORDER BY run_at LIMIT ?) RETURNING id, payload",
  );
  const complete = db.prepare("UPDATE jobs SET status = 'done' WHERE id = ?");
  const claimTx = db.transaction((limit) => claim.all(Date.now(), limit));
  const completeTx = db.transaction((ids) => {
    for (const id of ids) complete.run(id);
  });
  const t = performance.now();
  let processed = 0;
  while (processed < n) {
    const jobs = claimTx.immediate(perTransaction);
    for (const job of jobs) JSON.parse(job.payload);
    completeTx.immediate(jobs.map((j) => j.id));
    processed += jobs.length;
  }
  return { rate: rate(n, performance.now() - t) };
}

/** The raw twin of `docketProcess`: Docket's writes for each run, by plain statements, `perTransaction` at a time. */
async function rawDocketWrites({ n, perTransaction }) {
  const file = tempFile();
  await fillDocket(file, n);
  const t = performance.now();
  const processed = docketWritesLoop(file, perTransaction, definition);
  const ms = performance.now() - t;
  if (processed !== n) throw new Error(`raw processed ${processed} of ${n}`);
  return { rate: rate(n, ms) };
}

async function plainjobRun({ n }) {
  const { better, defineQueue, defineWorker } = await import('plainjob');
  const db = new Database(tempFile());
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const quiet = { error() {}, warn() {}, info() {}, debug() {} };
  const queue = defineQueue({ connection: better(db), logger: quiet });
  let t = performance.now();
  for (let i = 0; i < n; i++) queue.add('noop', payload(i));
  const enqueue = rate(n, performance.now() - t);
  let done = 0;
  let finish;
  const finished = new Promise((resolve) => {
    finish = resolve;
  });
  const worker = defineWorker('noop', async () => {}, {
    queue,
    logger: quiet,
    onCompleted: () => {
      if (++done === n) finish();
    },
  });
  t = performance.now();
  void worker.start();
  await finished;
  const processed = rate(n, performance.now() - t);
  await worker.stop();
  queue.close();
  return { enqueue, rate: processed };
}

/** Enqueue-to-handler latency at `perSecond` runs/s, the producer in this process or in a child process. */
async function docketLatency({ count, perSecond, remote }) {
  const filename = tempFile();
  const latencies = latencyRecorder(count);
  const queue = createQueue({ store: sqliteStore({ filename }), runtime: { concurrency: 8 } });
  const task = queue.define(definition, {
    execute(ctx) {
      latencies.record(ctx.query.i, performance.timeOrigin + performance.now() - ctx.query.t);
      return ctx.end();
    },
  });
  await queue.ready();
  if (remote) {
    const child = spawn(
      process.execPath,
      [fileURLToPath(import.meta.url), 'produce', JSON.stringify({ filename, count, perSecond })],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await latencies.done;
    await exited;
  } else {
    await produce({ task, count, perSecond });
    await latencies.done;
  }
  await queue.close();
  return latencies.result();
}

async function produce({ task, count, perSecond, filename }) {
  let producer;
  let target = task;
  if (!target) {
    producer = createQueue({ store: sqliteStore({ filename }), runtime: { mode: 'producer' } });
    target = producer.define(definition);
    await producer.ready();
  }
  await pacedSends(count, perSecond, (i) =>
    target.start({ query: { ...payload(i), t: performance.timeOrigin + performance.now() } }),
  );
  await producer?.close();
  return {};
}

/** The raw baseline for latency: a loop that polls the jobs table every 10 ms. */
async function rawLatency({ count, perSecond }) {
  const db = rawDb(tempFile());
  const insert = db.prepare("INSERT INTO jobs (payload, status, run_at) VALUES (?, 'pending', ?)");
  const claim = db.prepare(
    "UPDATE jobs SET status = 'running' WHERE id IN (SELECT id FROM jobs WHERE status = 'pending' ORDER BY run_at LIMIT 100) RETURNING id, payload",
  );
  const complete = db.prepare("UPDATE jobs SET status = 'done' WHERE id = ?");
  const latencies = latencyRecorder(count);
  let stop = false;
  const poller = (async () => {
    while (!stop) {
      const jobs = db.transaction(() => claim.all()).immediate();
      for (const job of jobs) {
        const sent = JSON.parse(job.payload);
        latencies.record(sent.i, Date.now() - sent.t);
        db.transaction(() => complete.run(job.id)).immediate();
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  await pacedSends(count, perSecond, (i) =>
    db.transaction(() => insert.run(JSON.stringify({ ...payload(i), t: Date.now() }), Date.now())).immediate(),
  );
  await latencies.done;
  stop = true;
  await poller;
  return latencies.result();
}

/** For cold start: prepares a file with one pending run (Docket) or one pending job (raw). */
async function prepareCold({ filename, kind }) {
  if (kind === 'docket') {
    const queue = createQueue({ store: sqliteStore({ filename }), runtime: { mode: 'producer' } });
    const task = queue.define(definition);
    await queue.ready();
    await task.start({ query: payload(0) });
    await queue.close();
  } else {
    const db = rawDb(filename);
    db.prepare("INSERT INTO jobs (payload, status, run_at) VALUES (?, 'pending', 0)").run(JSON.stringify(payload(0)));
    db.close();
  }
  return {};
}

/** Cold start, Docket: open a queue on an existing file, process its one run, exit. */
async function coldDocket({ filename }) {
  let finish;
  const finished = new Promise((resolve) => {
    finish = resolve;
  });
  const queue = createQueue({ store: sqliteStore({ filename }), runtime: { mode: 'consumer' } });
  queue.define(definition, {
    execute(ctx) {
      finish();
      return ctx.end();
    },
  });
  await queue.ready();
  await finished;
  await queue.close();
  return {};
}

/** Cold start, raw: open the file, claim and complete its one job, exit. */
function coldRaw({ filename }) {
  const db = rawDb(filename);
  const job = db
    .transaction(() =>
      db
        .prepare(
          "UPDATE jobs SET status = 'running' WHERE id = (SELECT id FROM jobs WHERE status = 'pending' LIMIT 1) RETURNING id",
        )
        .get(),
    )
    .immediate();
  db.transaction(() => db.prepare("UPDATE jobs SET status = 'done' WHERE id = ?").run(job.id)).immediate();
  db.close();
  return {};
}

/** Fills a Docket file with `finished` successful runs and their history, straight into the tables (fast). */
async function fillFinished({ filename, finished }) {
  await fillDocket(filename, 1);
  const db = new Database(filename);
  const row = db.prepare('SELECT * FROM docket_runs LIMIT 1').get();
  const columns = Object.keys(row);
  const insertRun = db.prepare(
    `INSERT INTO docket_runs (${columns.join(', ')}) VALUES (${columns.map((c) => `@${c}`).join(', ')})`,
  );
  const history = db.prepare(
    "INSERT INTO docket_history (run_id, seq, at, from_status, to_status, reason, actor) VALUES (?, ?, '2026-01-01T00:00:00.000Z', ?, ?, ?, 'bench')",
  );
  const change = db.prepare(
    'INSERT INTO docket_changes (namespace, task_name, task_version, run_id, seq) VALUES (@namespace, @task_name, @task_version, ?, ?)',
  );
  // Each entry enters the changes feed too, as the store's own insert does.
  const insertHistory = (runId, seq, from, to, reason) => {
    history.run(runId, seq, from, to, reason);
    change.run({ namespace: row.namespace, task_name: row.task_name, task_version: row.task_version }, runId, seq);
  };
  const base = Date.now() - 86_400_000;
  const batch = db.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const runId = (base + Math.floor(i / 1000)).toString(16).padStart(12, '0') + i.toString(16).padStart(20, '0');
      insertRun.run({
        ...row,
        run_id: runId,
        status: 'success',
        reason: 'COMPLETED',
        revision: 3,
        due_at: null,
        claim_due_at: null,
        query: JSON.stringify(payload(i)),
      });
      insertHistory(runId, 1, null, 'pending', 'STARTED');
      insertHistory(runId, 2, 'pending', 'running', 'CLAIMED');
      insertHistory(runId, 3, 'running', 'success', 'COMPLETED');
    }
  });
  for (let i = 0; i < finished; i += 50_000) batch.immediate(i, Math.min(finished, i + 50_000));
  db.prepare("DELETE FROM docket_runs WHERE status = 'pending'").run();
  // The rows went in behind the store's back: count them as the store would have (as migration 0003 does).
  db.exec(`DELETE FROM docket_run_counts;
    INSERT INTO docket_run_counts (namespace, task_name, task_version, status, n)
      SELECT namespace, task_name, task_version, status, count(*) FROM docket_runs
      WHERE status IN ('waiting', 'blocked', 'paused', 'success', 'failed', 'cancelled')
      GROUP BY namespace, task_name, task_version, status;
    DELETE FROM docket_settled_minutes;
    INSERT INTO docket_settled_minutes (namespace, minute, n)
      SELECT namespace, updated_at - (updated_at % 60000), count(*) FROM docket_runs
      WHERE status IN ('success', 'failed', 'cancelled') GROUP BY 1, 2`);
  db.close();
  return {};
}

/** `operator.stats()` on a file (median of 101 calls), and the dashboard's overview and runs page (51 each), in ms. */
async function docketStats({ filename }) {
  const queue = createQueue({ store: sqliteStore({ filename }), runtime: { mode: 'producer' } });
  queue.define(definition);
  await queue.ready();
  const ms = await medianStatsMs(queue);
  const pages = await medianPagesMs(queue);
  const feedMs = await medianFeedMs(queue);
  await queue.close();
  return { ms, ...pages, feedMs };
}

const scenarios = {
  docketStats,
  docketStarts,
  rawStarts,
  docketStartMany,
  rawStartMany,
  docketProcess,
  rawProcess,
  rawDocketWrites,
  rawDocketStarts,
  plainjobRun,
  docketLatency,
  rawLatency,
  produce,
  prepareCold,
  coldDocket,
  coldRaw,
  fillFinished,
};

const result = await scenarios[name](args);
process.stdout.write(`${JSON.stringify(result)}\n`);
