// Docket on PostgreSQL with several worker processes on one backlog: `node pg-fleet.mjs fleet <json args>` prints one
// JSON line; it spawns `node pg-fleet.mjs worker <json args>` once per worker process.
// The backlog is started with its task paused; the clock starts when every worker is ready and the task is resumed,
// and stops when the store counts every run settled. Workers poll every 100 ms, so the resume reaches them within a
// poll (n is large enough for that to be a small part of the time).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createQueue } from '@docket/core';
import { postgresStore } from '@docket/store-postgres';
import pg from 'pg';
import { definition, machineBusyMs, payload, rate } from './common.mjs';

const [name, rawArgs] = process.argv.slice(2);
const args = JSON.parse(rawArgs ?? '{}');
const POLL_MS = 100;

/** A queue on the fleet's schema. */
const queueOn = ({ url, schema }, runtime) =>
  createQueue({
    store: postgresStore({ connectionString: url, schema }),
    runtime,
    protocol: { pollMs: POLL_MS },
    logger: false,
  });

/** One worker process: a consumer of the task that says `ready` once it can claim, and closes on SIGTERM. */
async function worker({ url, schema, concurrency }) {
  const queue = queueOn({ url, schema }, { mode: 'consumer', concurrency });
  queue.define(definition, { execute: (ctx) => ctx.end() });
  await queue.ready();
  process.once('SIGTERM', () => {
    void queue.close().then(() => process.exit(0));
  });
  process.stdout.write('ready\n');
  await new Promise(() => undefined);
}

/** Spawns one worker process and resolves once it is ready. */
function spawnWorker(workerArgs) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'worker', JSON.stringify(workerArgs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      if (String(chunk).includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`a worker exited with ${code} before it was ready`)));
  });
}

/** `n` runs processed by `workers` processes of `concurrency` slots each: runs per second from the resume. */
async function fleet({ url, n, workers, concurrency }) {
  const schema = `bench_fleet_${process.pid}`;
  const producer = queueOn({ url, schema }, { mode: 'producer' });
  const task = producer.define(definition);
  await producer.ready();
  const command = (verb, revision) => ({
    task: definition.name,
    expectedRevision: revision,
    reason: 'bench',
    commandId: verb,
  });
  const listed = (await producer.operator.tasks.list()).find((t) => t.name === definition.name);
  const paused = await producer.operator.tasks.pause(command('pause', listed.revision));
  for (let i = 0; i < n; i += 500) {
    await task.startMany(Array.from({ length: Math.min(500, n - i) }, (_, j) => ({ query: payload(i + j) })));
  }
  const children = await Promise.all(Array.from({ length: workers }, () => spawnWorker({ url, schema, concurrency })));
  const t = performance.now();
  const busy = machineBusyMs();
  await producer.operator.tasks.resume(command('resume', paused.revision));
  while ((await producer.operator.stats()).byStatus.success < n) await new Promise((r) => setTimeout(r, 20));
  const elapsed = performance.now() - t;
  // How many of the machine's cores were busy on average (workers, server and this process together).
  const cores = busy === null ? null : Math.round(((machineBusyMs() - busy) / elapsed) * 100) / 100;
  await Promise.all(children.map((child) => new Promise((resolve) => child.once('exit', resolve).kill('SIGTERM'))));
  await producer.close();
  const client = new pg.Client(url);
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
  return { rate: rate(n, elapsed), cores };
}

if (name === 'worker') await worker(args);
else if (name === 'fleet') {
  process.stdout.write(`${JSON.stringify(await fleet(args))}\n`);
  process.exit(0);
} else throw new Error(`unknown scenario ${name}`);
