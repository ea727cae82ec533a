// BullMQ on this machine's Redis, one measurement per process: `node bullmq-scenarios.mjs <name> <json args>` prints
// one JSON line. The workload is Docket's: a ~100-byte payload and a handler that does nothing. Each measurement uses
// a key prefix of its own and removes its keys afterwards; BullMQ's defaults otherwise (completed jobs are kept, as
// Docket keeps finished runs).
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { latch, latencyRecorder, pacedSends, payload, rate } from './common.mjs';

const [name, rawArgs] = process.argv.slice(2);
const args = JSON.parse(rawArgs ?? '{}');
const url = new URL(args.url ?? 'redis://127.0.0.1:6379');
const connection = { host: url.hostname, port: Number(url.port || 6379), maxRetriesPerRequest: null };
const prefix = `docket-bench-${process.pid}`;

/** Removes every key this process wrote. */
async function cleanUp(queue) {
  await queue.obliterate({ force: true });
  await queue.close();
}

/** n jobs added with `addBulk` of 100, then one worker with `concurrency` processes them. */
async function bullmqProcess({ n, concurrency }) {
  const queue = new Queue('noop', { connection, prefix });
  let t = performance.now();
  for (let i = 0; i < n; i += 100) {
    const jobs = [];
    for (let j = i; j < Math.min(n, i + 100); j++) jobs.push({ name: 'noop', data: payload(j) });
    await queue.addBulk(jobs);
  }
  const enqueue = rate(n, performance.now() - t);
  const all = latch();
  let done = 0;
  const worker = new Worker(
    'noop',
    async () => {
      if (++done === n) all.open();
    },
    { connection, prefix, concurrency, autorun: false },
  );
  t = performance.now();
  void worker.run();
  await all.done;
  const processed = rate(n, performance.now() - t);
  await worker.close();
  await cleanUp(queue);
  return { enqueue, rate: processed };
}

/**
 * Enqueue-to-handler latency at `perSecond` jobs/s: a producer queue and a worker (concurrency 8) in this process, each
 * on its own Redis connection (the worker blocks on Redis until a job arrives).
 */
async function bullmqLatency({ count, perSecond }) {
  const queue = new Queue('noop', { connection, prefix });
  const latencies = latencyRecorder(count);
  const worker = new Worker(
    'noop',
    async (job) => {
      latencies.record(job.data.i, performance.now() - job.data.t);
    },
    { connection, prefix, concurrency: 8 },
  );
  await worker.waitUntilReady();
  await pacedSends(count, perSecond, (i) => queue.add('noop', { ...payload(i), t: performance.now() }));
  await latencies.done;
  await worker.close();
  await cleanUp(queue);
  return latencies.result();
}

/** Whether Redis answers at `url` (the section is skipped when it does not). */
async function redisPing() {
  const client = new Redis({ ...connection, lazyConnect: true, retryStrategy: () => null });
  try {
    await client.connect();
    const version = (await client.info('server')).match(/redis_version:(\S+)/)?.[1] ?? 'unknown';
    return { ok: (await client.ping()) === 'PONG', version };
  } catch (error) {
    return { ok: false, reason: error.message };
  } finally {
    client.disconnect();
  }
}

const scenarios = { bullmqProcess, bullmqLatency, redisPing };
const result = await scenarios[name](args);
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
