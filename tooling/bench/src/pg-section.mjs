// The PostgreSQL section of `pnpm bench`: Docket against raw SKIP LOCKED loops, graphile-worker and pg-boss on the
// same server and workload, each measurement a fresh process and a fresh schema; processing rates, and the latencies
// of Docket and graphile-worker, and bulk starts are medians of 3 (Docket and its peers measured in turns).
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { dashboardRows, feedRow, runsPageAgainstOnePage } from './stats-timing.mjs';

/**
 * A peer's name and the version installed in the bench's node_modules (package.json pins the newest that run on
 * Node 20; see bench-node24.sh). Read from the file: not every peer exports its package.json.
 */
const installed = (name) =>
  `${name} ${JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8')).version}`;
const GRAPHILE = installed('graphile-worker');
const PG_BOSS = installed('pg-boss');
/** Plain SQL doing a Docket worker's writes on Docket's own tables: what the tables cost without Docket's JavaScript. */
const RAW_TABLES = "raw SQL doing a Docket worker's writes, 128 per transaction, 2 loops";

/** The server the section measures on, or `null` (with the reason logged) when none answers. */
export async function benchDatabase(log) {
  const url =
    process.env.DOCKET_BENCH_DATABASE_URL ??
    process.env.DOCKET_TEST_DATABASE_URL ??
    'postgres://postgres@127.0.0.1:5432/test';
  const client = new pg.Client(url);
  try {
    await client.connect();
    const { rows } = await client.query('SHOW server_version');
    const settings = await client.query(
      "SELECT name, setting FROM pg_settings WHERE name IN ('synchronous_commit', 'fsync', 'shared_buffers')",
    );
    return {
      url,
      version: rows[0].server_version,
      settings: Object.fromEntries(settings.rows.map((r) => [r.name, r.setting])),
    };
  } catch (error) {
    log(`PostgreSQL section skipped: cannot connect to ${url.replace(/\/\/[^@]*@/, '//')} (${error.message})`);
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The slots of the Docket worker that the PostgreSQL processing rows measure. */
export const PG_CONCURRENCY = 512;

/** Measures the section and adds its rows through `add`. */
export async function postgresSection({ db, quick, scenario, add, log, peer }) {
  const n = quick ? 2_000 : 20_000;
  const times = quick ? 1 : 3;
  // Docket's claims take half the slots at a time: 512 slots claim 256 runs per statement, against graphile-worker's
  // local queue of 500. Measured here in alternation, 512 processed ~20% more than 256, and 1,024 no more than 512.
  const concurrency = PG_CONCURRENCY;
  const url = db.url;
  /** The sample with the median `key`. */
  const middle = (samples, key) => samples.sort((a, b) => a[key] - b[key])[Math.floor(samples.length / 2)];
  /**
   * Medians of `times` runs of each scenario taken in turns (a, b, a, b, ...), so that a machine whose speed drifts
   * during the section (it does here) weighs on all alike.
   */
  const turnMedians = async (scenarios, key = 'rate') => {
    const samples = scenarios.map(() => []);
    for (let i = 0; i < times; i++) {
      for (const [j, [name, args]] of scenarios.entries()) samples[j].push(await scenario(name, { url, ...args }));
    }
    return samples.map((list) => middle(list, key));
  };
  /** The sample with the median `key` of `times` runs of one scenario. */
  const median = async (name, args, key = 'rate') => (await turnMedians([[name, args]], key))[0];

  const finished = quick ? 20_000 : 1_000_000;
  log(`postgres operator.stats(), ${finished.toLocaleString('en')} finished runs`);
  const statsEmpty = await scenario('docketStats', { url, finished: 0 });
  const statsFull = await scenario('docketStats', { url, finished });
  const statsSmall = await scenario('docketStats', { url, finished: 1_000 });
  add(
    'PostgreSQL operator.stats() ms (median of 101)',
    `${finished.toLocaleString('en')} finished`,
    statsFull.ms,
    statsEmpty.ms,
    'same, empty schema',
    2,
    'lower',
  );
  dashboardRows(
    add,
    'PostgreSQL ',
    `${finished.toLocaleString('en')} finished`,
    statsFull,
    statsEmpty,
    'same, empty schema',
  );
  runsPageAgainstOnePage(
    add,
    'PostgreSQL ',
    `${finished.toLocaleString('en')} finished`,
    statsFull,
    statsSmall,
    'a schema',
  );
  feedRow(add, 'PostgreSQL ', `${(finished * 3).toLocaleString('en')} entries kept`, statsFull, statsSmall, 'a schema');

  log(`postgres processing, n=${n}`);
  const [docket, graphile] = await turnMedians([
    ['docketProcess', { n, concurrency }],
    ['graphileProcess', { n, concurrency: 32, localQueue: 500 }],
  ]);
  const raw1 = await median('rawProcess', { n: Math.min(n, 5_000), perTransaction: 1, workers: 4 });
  const raw100 = await median('rawProcess', { n, perTransaction: 100, workers: 4 });
  const boss = await median('pgBossProcess', { n, batchSize: 500 });
  const tables = await median('rawDocketTables', { n, perTransaction: 128, loops: 2 });
  const section = 'PostgreSQL processed/s';
  const measure = `n=${n}`;
  const graphileName = `${GRAPHILE}, local queue 500, concurrency 32`;
  add(section, measure, docket.rate, graphile.rate, graphileName, 1.1);
  if (peer !== null) {
    const bull = await peer.bullmq('bullmqProcess', { n, concurrency });
    add(section, measure, docket.rate, bull.rate, `${peer.name}, concurrency ${concurrency}`, 1);
  }
  add(section, measure, docket.rate, boss.rate, `${PG_BOSS}, batched fetch of 500`, 1);
  add(section, measure, docket.rate, raw100.rate, 'raw SKIP LOCKED, 100 per transaction, 4 workers', null);
  add(section, measure, docket.rate, tables.rate, RAW_TABLES, null);
  add(section, measure, docket.rate, raw1.rate, 'raw SKIP LOCKED, 1 per transaction, 4 workers', null);
  // A large backlog: graphile-worker's own performance test queues 200,000 jobs (20,000 in an earlier version).
  // Docket and graphile-worker (the target) only, in turns; pg-boss would take minutes at its rate, and the raw
  // loops are there at n above.
  const large = quick ? null : 200_000;
  let docketLarge = null;
  let graphileLarge = null;
  if (large !== null) {
    log(`postgres processing, n=${large}`);
    [docketLarge, graphileLarge] = await turnMedians([
      ['docketProcess', { n: large, concurrency }],
      ['graphileProcess', { n: large, concurrency: 32, localQueue: 500 }],
    ]);
    add(section, `n=${large}`, docketLarge.rate, graphileLarge.rate, graphileName, 1);
  }
  // Where the processing gap comes from, over the same processing phase as the rates above: CPU per run of the worker
  // process and of the rest of the machine (the server here; Linux only), and the server's WAL bytes per run.
  const cost = 'PostgreSQL cost per run (informational)';
  /** A cost row per peer: `key` of Docket's sample against the same of each peer's. */
  const perRun = (
    label,
    key,
    ours = docket,
    peers = [
      [graphile, GRAPHILE],
      [tables, RAW_TABLES],
    ],
  ) => {
    for (const [peer, name] of peers) {
      const [a, b] = [ours.perRun[key], peer.perRun[key]];
      if (a !== null && b !== null) add(cost, label, a, b, name, null, 'lower');
    }
  };
  perRun('CPU µs, worker process', 'worker');
  perRun('CPU µs, server (rest of machine)', 'rest');
  perRun('WAL bytes', 'walBytes');
  // The same costs with the large backlog, against graphile-worker: where its rate goes as the backlog grows.
  if (large !== null) {
    perRun(`CPU µs, worker process, n=${large}`, 'worker', docketLarge, [[graphileLarge, GRAPHILE]]);
    perRun(`CPU µs, server (rest of machine), n=${large}`, 'rest', docketLarge, [[graphileLarge, GRAPHILE]]);
  }
  // Bulk starts: 100 per call, against graphile-worker's addJobs(100) and pg-boss's insert of 100, in turns.
  log(`postgres bulk starts, n=${n}`);
  const [many, graphileMany, bossMany] = await turnMedians(
    [
      ['docketStartMany', { n }],
      ['graphileEnqueue', { n }],
      ['pgBossEnqueue', { n }],
    ],
    'enqueue',
  );
  const bulk = 'PostgreSQL starts/s, 100 per call';
  add(bulk, measure, many.enqueue, graphileMany.enqueue, `${GRAPHILE} addJobs(100)`, 1);
  add(bulk, measure, many.enqueue, bossMany.enqueue, `${PG_BOSS} insert(100)`, 1);
  const enqueue = 'PostgreSQL enqueue/s (informational)';
  add(enqueue, measure, docket.enqueue, graphile.enqueue, `${GRAPHILE} addJobs(100)`, null);
  add(enqueue, measure, docket.enqueue, boss.enqueue, `${PG_BOSS} insert(500)`, null);
  if (large !== null) {
    add(enqueue, `n=${large}`, docketLarge.enqueue, graphileLarge.enqueue, `${GRAPHILE} addJobs(100)`, null);
  }

  log('postgres latency at 200 runs/s');
  const count = quick ? 200 : 1_000;
  // Docket and graphile-worker (the target) by the median p50 of 3 runs in turns; pg-boss, 100× slower here, once.
  const [docketLatency, graphileLatency] = await turnMedians(
    [
      ['docketLatency', { count, perSecond: 200 }],
      ['graphileLatency', { count, perSecond: 200, concurrency: 8 }],
    ],
    'p50',
  );
  const bossLatency = await scenario('pgBossLatency', { url, count, perSecond: 200 });
  const latency = (p) => `PostgreSQL latency ${p} ms, 200 runs/s`;
  const where = 'producer on its own pool';
  add(latency('p50'), where, docketLatency.p50, graphileLatency.p50, GRAPHILE, 1, 'lower');
  add(latency('p99'), where, docketLatency.p99, graphileLatency.p99, GRAPHILE, null, 'lower');
  add(latency('p99'), where, docketLatency.p99, 10, 'a fixed bound of 10 ms', 1, 'lower');
  add(latency('p50'), where, docketLatency.p50, bossLatency.p50, PG_BOSS, null, 'lower');
  if (peer !== null) {
    const bull = await peer.bullmq('bullmqLatency', { count, perSecond: 200 });
    add(latency('p50'), where, docketLatency.p50, bull.p50, peer.name, 1, 'lower');
    add(latency('p99'), where, docketLatency.p99, bull.p99, peer.name, null, 'lower');
  }
}
