// `pnpm bench`: measures Docket on SQLite against raw better-sqlite3 and plainjob, and Docket on PostgreSQL against
// raw SKIP LOCKED loops, graphile-worker and pg-boss, in one run on this machine; prints a table of ratios and writes
// docs/benchmarks.md. Options: --quick (small N, to check the harness), --finished <n> (finished runs already in the
// SQLite file; default 1,000,000), --no-write (print only), --only sqlite|postgres|flow|children|fleet (one section;
// never written).
// PostgreSQL: DOCKET_BENCH_DATABASE_URL, else DOCKET_TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { WARM_UP } from './common.mjs';
import { familySection } from './family-section.mjs';
import { flowSection } from './flow-section.mjs';
import { benchDatabase, PG_CONCURRENCY, postgresSection } from './pg-section.mjs';
import { dashboardRows, feedRow, runsPageAgainstOnePage } from './stats-timing.mjs';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const finishedIndex = argv.indexOf('--finished');
const finishedRuns = finishedIndex >= 0 ? Number(argv[finishedIndex + 1]) : quick ? 20_000 : 1_000_000;
const sizes = quick ? [2_000] : [20_000, 100_000];
const concurrency = 256;
const onlyIndex = argv.indexOf('--only');
const only = onlyIndex >= 0 ? argv[onlyIndex + 1] : null;
const write = !argv.includes('--no-write') && only === null;
const SCENARIOS = fileURLToPath(new URL('./scenarios.mjs', import.meta.url));
const PG_SCENARIOS = fileURLToPath(new URL('./pg-scenarios.mjs', import.meta.url));
const BULLMQ_SCENARIOS = fileURLToPath(new URL('./bullmq-scenarios.mjs', import.meta.url));
const FLEET = fileURLToPath(new URL('./pg-fleet.mjs', import.meta.url));
/** The peer every processing section is also measured against, on this machine's Redis. */
const BULLMQ = 'BullMQ 6.7.6 (Redis)';

function scenario(name, args = {}, file = SCENARIOS) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, name, JSON.stringify(args)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${name} exited with ${code}`));
      const lines = out.trim().split('\n');
      resolve(JSON.parse(lines.at(-1)));
    });
  });
}

/** Wall time of one whole process, spawn to exit, in ms, on a file `prepare` made for it. */
async function wallTime(name, args, prepare) {
  const filename = join(mkdtempSync(join(tmpdir(), 'docket-cold-')), 'cold.sqlite');
  await scenario(prepare.name, { ...prepare.args, filename });
  const t = performance.now();
  await scenario(name, { ...args, filename });
  return { ms: Math.round(performance.now() - t) };
}

const log = (line) => process.stderr.write(`${line}\n`);
const rows = [];
const add = (section, measure, docket, baseline, baselineName, target, better = 'higher') => {
  const ratio = baseline ? docket / baseline : null;
  let met = null;
  if (target !== null && ratio !== null) met = better === 'higher' ? ratio >= target : ratio <= target;
  rows.push({ section, measure, docket, baseline, baselineName, ratio, target, better, met });
};

log(`Docket benchmark${quick ? ' (quick)' : ''}: sizes ${sizes.join(', ')}, concurrency ${concurrency}`);
const redisUrl = process.env.DOCKET_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const bullmq = (name, args) => scenario(name, { url: redisUrl, ...args }, BULLMQ_SCENARIOS);
const redis = await bullmq('redisPing', {});
if (!redis.ok) log(`BullMQ rows skipped: Redis does not answer at ${redisUrl} (${redis.reason})`);
const peer = redis.ok ? { bullmq, name: BULLMQ } : null;
if (only === null || only === 'sqlite') await sqliteSection();
if (only === null || only === 'sqlite' || only === 'flow') {
  await flowSection({ quick, concurrency, scenario, inTurns, add, log, store: 'SQLite' });
}
if (only === null || only === 'sqlite' || only === 'children') {
  await familySection({ quick, concurrency, scenario, inTurns, add, log, store: 'SQLite' });
}
let db = null;
if (only === null || only === 'postgres' || only === 'children' || only === 'flow') {
  db = await benchDatabase(log);
  if (db !== null && (only === null || only === 'postgres')) {
    const pgScenario = (name, args) => scenario(name, args, PG_SCENARIOS);
    await postgresSection({ db, quick, scenario: pgScenario, add, log, peer });
  }
  const args = { quick, concurrency: PG_CONCURRENCY, scenario, inTurns, add, log, store: 'PostgreSQL', url: db?.url };
  if (db !== null && only !== 'children') await flowSection(args);
  if (db !== null && only !== 'flow') await familySection(args);
}
if (only === 'fleet') db = await benchDatabase(log);
if ((only === null || only === 'fleet') && db !== null) await fleetRows(db);
if (only === null && db !== null) await storesRow(db);

/**
 * Docket on PostgreSQL with 2 and 4 worker processes (256 slots each) on one backlog against 1, in turns: what adding
 * worker processes gives on this machine (informational: the server shares its cores).
 */
async function fleetRows(db) {
  const n = quick ? 5_000 : 60_000;
  log(`postgres worker processes 1, 2, 4, n=${n}`);
  const run = (workers) => () => scenario('fleet', { url: db.url, n, workers, concurrency: 256 }, FLEET);
  const [one, two, four] = await inTurns([run(1), run(2), run(4)]);
  log(`cores busy on average while processing: 1 worker ${one.cores}, 2 workers ${two.cores}, 4 workers ${four.cores}`);
  for (const [workers, result] of [
    [2, two],
    [4, four],
  ]) {
    const name = '1 worker process of 256 slots, same run';
    add(
      `PostgreSQL processed/s, ${workers} worker processes`,
      `n=${n}, 256 slots each`,
      result.rate,
      one.rate,
      name,
      null,
    );
  }
}

/**
 * Docket on SQLite against Docket on PostgreSQL, both at their processing settings, three of each in turns: the
 * default store should not be the slow one.
 */
async function storesRow(db) {
  const n = sizes[0];
  log(`SQLite against PostgreSQL, n=${n}`);
  const [sqlite, postgres] = await inTurns([
    () => scenario('docketProcess', { n, concurrency }),
    () => scenario('docketProcess', { n, concurrency: PG_CONCURRENCY, url: db.url }, PG_SCENARIOS),
  ]);
  const name = `Docket on PostgreSQL, concurrency ${PG_CONCURRENCY}, same run`;
  add('processed/s, SQLite against PostgreSQL', `n=${n}`, sqlite.rate, postgres.rate, name, 1);
}

/**
 * Runs each of `runs` (functions answering a scenario's result) `times` times in turns (a, b, c, a, b, c, ...) and
 * answers, for each, the result with the median `key`: a machine whose speed drifts weighs on all of them alike.
 */
async function inTurns(runs, times = 3, key = 'rate') {
  const samples = runs.map(() => []);
  for (let i = 0; i < times; i++) {
    for (const [j, run] of runs.entries()) samples[j].push(await run());
  }
  return samples.map((list) => [...list].sort((a, b) => a[key] - b[key])[Math.floor(list.length / 2)]);
}

/** SQLite: Docket against raw better-sqlite3, its twins on Docket's tables, plainjob and BullMQ. */
async function sqliteSection() {
  for (const n of sizes) {
    log(`starts, n=${n}`);
    const [docket, raw, twinOne] = await inTurns([
      () => scenario('docketStarts', { n }),
      () => scenario('rawStarts', { n }),
      () => scenario('rawDocketStarts', { n, per: 1 }),
    ]);
    add('starts/s (one per call)', `n=${n}`, docket.rate, raw.rate, 'raw one-row insert transactions', 0.6);
    const twinOneName = "raw better-sqlite3 doing start's writes, 1 per transaction";
    add('starts/s (one per call)', `n=${n}`, docket.rate, twinOne.rate, twinOneName, null);
    const [many, rawMany, twinMany] = await inTurns([
      () => scenario('docketStartMany', { n, per: 100 }),
      () => scenario('rawStartMany', { n, per: 100 }),
      () => scenario('rawDocketStarts', { n, per: 100 }),
    ]);
    add('starts/s (startMany of 100)', `n=${n}`, many.rate, rawMany.rate, 'raw 100-row insert transactions', 0.5);
    const twinName = "raw better-sqlite3 doing startMany's writes, 100 per transaction";
    add('starts/s (startMany of 100)', `n=${n}`, many.rate, twinMany.rate, twinName, null);

    log(`processing, n=${n}`);
    const [proc, prioritized, twin, bull] = await inTurns([
      () => scenario('docketProcess', { n, concurrency }),
      () => scenario('docketProcess', { n, concurrency, priorities: true }),
      () => scenario('rawDocketWrites', { n, perTransaction: 128 }),
      () => (peer === null ? { rate: 0 } : peer.bullmq('bullmqProcess', { n, concurrency })),
    ]);
    const raw1 = await scenario('rawProcess', { n, perTransaction: 1 });
    const raw100 = await scenario('rawProcess', { n, perTransaction: 100 });
    const plain = await scenario('plainjobRun', { n });
    const processed = 'processed/s (single-page no-op runs)';
    add(
      processed,
      `n=${n}`,
      proc.rate,
      twin.rate,
      "raw better-sqlite3 doing a Docket worker's writes, 128 per transaction",
      0.8,
    );
    if (peer !== null) add(processed, `n=${n}`, proc.rate, bull.rate, `${peer.name}, concurrency ${concurrency}`, 1);
    add(
      processed,
      `n=${n}`,
      proc.rate,
      raw100.rate,
      'raw claim+complete on a one-table queue, 100 per transaction',
      null,
    );
    add(processed, `n=${n}`, proc.rate, raw1.rate, 'raw claim+complete on a one-table queue, 1 per transaction', null);
    add(processed, `n=${n}`, proc.rate, plain.rate, 'plainjob 0.0.14', 3);
    add(
      'processed/s with five priorities in use',
      `n=${n}`,
      prioritized.rate,
      proc.rate,
      'Docket without priorities, same run',
      0.9,
    );
    add('enqueue/s (informational)', `n=${n}`, docket.rate, plain.enqueue, 'plainjob 0.0.14 queue.add', null);
  }

  log('latency at 200 runs/s');
  const count = quick ? 200 : 1000;
  const inProcess = await scenario('docketLatency', { count, perSecond: 200, remote: false });
  const remote = await scenario('docketLatency', { count, perSecond: 200, remote: true });
  const rawPoll = await scenario('rawLatency', { count, perSecond: 200 });
  if (peer !== null) {
    const bull = await peer.bullmq('bullmqLatency', { count, perSecond: 200 });
    add('latency p50 ms, 200 runs/s', 'in-process', inProcess.p50, bull.p50, peer.name, null, 'lower');
  }
  add('latency p50 ms, 200 runs/s', 'in-process', inProcess.p50, rawPoll.p50, 'raw 10 ms poll loop', null, 'lower');
  add('latency p99 ms, 200 runs/s', 'in-process', inProcess.p99, rawPoll.p99, 'raw 10 ms poll loop', 1, 'lower');
  add(
    'latency p50 ms, 200 runs/s',
    'from another process',
    remote.p50,
    rawPoll.p50,
    'raw 10 ms poll loop',
    null,
    'lower',
  );
  add(
    'latency p99 ms, 200 runs/s',
    'from another process',
    remote.p99,
    rawPoll.p99,
    'raw 10 ms poll loop',
    null,
    'lower',
  );

  log('cold start');
  const [{ ms: coldDocket }, { ms: coldRaw }] = await inTurns(
    [
      () => wallTime('coldDocket', {}, { name: 'prepareCold', args: { kind: 'docket' } }),
      () => wallTime('coldRaw', {}, { name: 'prepareCold', args: { kind: 'raw' } }),
    ],
    5,
    'ms',
  );
  add(
    'cold start ms (whole process)',
    'open, process one, exit',
    coldDocket,
    coldRaw,
    'raw better-sqlite3',
    1.3,
    'lower',
  );

  await telemetryRows(sizes[0]);

  log(`${finishedRuns.toLocaleString('en')} finished runs in the file`);
  const filled = join(mkdtempSync(join(tmpdir(), 'docket-full-')), 'full.sqlite');
  await scenario('fillFinished', { filename: filled, finished: finishedRuns });
  const emptyFile = join(mkdtempSync(join(tmpdir(), 'docket-empty-')), 'empty.sqlite');
  await scenario('fillFinished', { filename: emptyFile, finished: 0 });
  const smallFile = join(mkdtempSync(join(tmpdir(), 'docket-small-')), 'small.sqlite');
  await scenario('fillFinished', { filename: smallFile, finished: 1_000 });
  const statsEmpty = await scenario('docketStats', { filename: emptyFile });
  const statsFull = await scenario('docketStats', { filename: filled });
  const statsSmall = await scenario('docketStats', { filename: smallFile });
  add(
    'operator.stats() ms (median of 101)',
    `${finishedRuns.toLocaleString('en')} finished`,
    statsFull.ms,
    statsEmpty.ms,
    'same, empty file',
    2,
    'lower',
  );
  dashboardRows(add, '', `${finishedRuns.toLocaleString('en')} finished`, statsFull, statsEmpty, 'same, empty file');
  runsPageAgainstOnePage(add, '', `${finishedRuns.toLocaleString('en')} finished`, statsFull, statsSmall, 'a file');
  feedRow(add, '', `${(finishedRuns * 3).toLocaleString('en')} entries kept`, statsFull, statsSmall, 'a file');
  const n = sizes[0];
  // Three of each, in turns (see inTurns); each run on the filled file adds its n runs to the finished ones.
  const [empty, full] = await inTurns([
    () => scenario('docketProcess', { n, concurrency }),
    () => scenario('docketProcess', { n, concurrency, filename: filled }),
  ]);
  add(
    'processed/s with finished runs in the file',
    `${finishedRuns.toLocaleString('en')} finished`,
    full.rate,
    empty.rate,
    'same, empty file',
    0.8,
  );
}

/**
 * Processing with `otelTelemetry()`, without an SDK and with one, against no telemetry: five of each, in turns (the
 * no-SDK row looks for a difference of a few percent, which three runs on a shared machine cannot tell apart).
 */
async function telemetryRows(n) {
  log(`processing with OpenTelemetry, n=${n}`);
  const [none, noop, sdk] = await inTurns(
    [undefined, 'otel-noop', 'otel-sdk'].map(
      (telemetry) => () => scenario('docketProcess', { n, concurrency, telemetry }),
    ),
    5,
  );
  const section = 'processed/s with otelTelemetry()';
  add(section, 'no SDK registered', noop.rate, none.rate, 'Docket without telemetry, same run', 0.95);
  add(section, 'SDK, batch span processor', sdk.rate, none.rate, 'Docket without telemetry, same run', 0.75);
}

const fmt = (v) => (v === null || v === undefined ? '' : typeof v === 'number' ? v.toLocaleString('en') : String(v));
const table = [
  '| measure | case | Docket | baseline | value | ratio | target | met |',
  '|---|---|---:|---|---:|---:|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.section} | ${r.measure} | ${fmt(r.docket)} | ${r.baselineName} | ${fmt(r.baseline)} | ${r.ratio === null ? '' : r.ratio.toFixed(2)} | ${r.target === null ? '' : `${r.better === 'higher' ? '>=' : '<='} ${r.target}`} | ${r.met === null ? '' : r.met ? 'yes' : '**no**'} |`,
  ),
].join('\n');
process.stdout.write(`${table}\n`);

if (write && !quick) {
  const sqliteVersion = new Database(':memory:').prepare('SELECT sqlite_version() AS v').get().v;
  let fs = 'unknown';
  try {
    fs = execFileSync('df', ['-T', tmpdir()], { encoding: 'utf8' }).split('\n')[1]?.split(/\s+/)[1] ?? fs;
  } catch {}
  const postgres =
    db === null
      ? 'PostgreSQL: no server answered, so the PostgreSQL rows are missing from this run.'
      : `PostgreSQL ${db.version} on the same machine over TCP loopback (synchronous_commit ${db.settings.synchronous_commit}, fsync ${db.settings.fsync}). Docket runs \`@docket/store-postgres\` with \`concurrency: ${PG_CONCURRENCY}\` in one process; each peer runs with the settings its row names; each system gets its own schema. Processing rates, bulk starts, and the latencies of Docket and graphile-worker are medians of 3 runs (latencies by p50); Docket and graphile-worker are measured in turns, and pg-boss too for bulk starts.`;
  const doc = `# Benchmarks

Measured by \`pnpm bench\` (tooling/bench) in one run on one machine; every number in a row comes from the same run.
Workload: ~100-byte JSON payload, a handler that does nothing. Each measurement is a fresh process and a fresh file
or schema.

- SQLite: Docket runs with \`concurrency: ${concurrency}\` on \`@docket/store-sqlite\` (WAL, synchronous NORMAL, batched
  commit). Raw baselines use better-sqlite3 with WAL and synchronous NORMAL, on a one-table queue or, in the rows
  that say they do Docket's writes, on Docket's own tables. Starts, and the processing rates of Docket (with and
  without priorities), its twin and BullMQ, are medians of 3 runs taken in turns, as are the rows with finished runs
  in the file; the rows with telemetry and cold starts are medians of 5, in turns.
- Latency rows leave out the first ${WARM_UP} runs, sent at the same pace (a fresh process's first connections and code are
  its cold start, measured apart); the child-run rows warm both queues with a family of one child first.
- ${postgres}

Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version},
SQLite ${sqliteVersion}, temp file system ${fs}. Date: ${new Date().toISOString().slice(0, 10)}. Shared machine: expect
±15% between runs.

${table}

${readFileSync(new URL('../notes.md', import.meta.url), 'utf8')}`;
  writeFileSync(new URL('../../../docs/benchmarks.md', import.meta.url), doc);
  log('wrote docs/benchmarks.md');
}
