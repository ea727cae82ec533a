// Child-run measurements, one per process: `node family-scenarios.mjs <name> <json args>` prints one JSON line. On a
// fresh SQLite file, or a fresh PostgreSQL schema when `url` is given (dropped at the end). No-op handlers, as in
// scenarios.mjs.
import { createQueue } from '@docket/core';
import { latch, payload } from './common.mjs';
import { freshStore } from './fresh-store.mjs';

const [name, rawArgs] = process.argv.slice(2);
const args = JSON.parse(rawArgs ?? '{}');

/**
 * A queue with the `leaf` task (no-op) and the `fanout` task whose first page starts `n` leaves, and ends with its
 * second. `onSuccess(runId, task)` is told of every run that succeeded, once its commit landed (the queue's telemetry
 * sink reports transitions after their commit). Before it answers, one family of one leaf runs through both tasks, so
 * that neither measurement pays the first connections, prepared statements and compiled code of a cold process.
 */
async function openFamily(url, concurrency, onSuccess) {
  const { open, drop } = await freshStore(url, 'family');
  let report = () => {};
  const sink = (event) => {
    if (event.type === 'transition' && event.entry.to === 'success') report(event.runId, event.task.name);
  };
  const queue = createQueue({
    store: open(),
    runtime: { mode: 'all', concurrency },
    logger: false,
    telemetry: { sink },
  });
  const leaf = queue.define({ name: 'leaf', version: '1' }, { execute: (ctx) => ctx.end() });
  const fanout = queue.define(
    { name: 'fanout', version: '1' },
    {
      execute(ctx) {
        if (ctx.page > 1) return ctx.end();
        const children = Array.from({ length: ctx.query.n }, (_, i) => ({ task: leaf, query: payload(i) }));
        return ctx.next(null, { children });
      },
    },
  );
  await queue.ready();
  const warm = await fanout.start({ query: { n: 1 } });
  if ((await fanout.wait(warm.runId, { timeoutMs: 60_000 }))?.status !== 'success') throw new Error('warm-up failed');
  report = onSuccess;
  return { queue, leaf, fanout, drop };
}

/** Measured rounds in one process: each scenario answers the median, so one stall of the machine weighs less. */
const ROUNDS = 3;

/** The median of `ROUNDS` timings of `once()` (each answering ms), run one after the other. */
async function medianOfRounds(once) {
  const times = [];
  for (let i = 0; i < ROUNDS; i++) times.push(await once());
  return times.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)];
}

/**
 * One parent with `n` no-op children, from its start to its success (as `independent` measures to its last run's
 * success; `task.wait` reads the run every 50 ms, which would add its own latency), the median of `ROUNDS`: answers
 * the time, and the settle rate of the last parent's last quarter of children against its first quarter (from their
 * `updatedAt`, the settle's time, in milliseconds: a tenth of 1,000 children settles within some 25 ms, where one
 * late commit weighs too much).
 */
async function fanout({ n, concurrency, url }) {
  let done = latch();
  let parentRunId = null;
  const family = await openFamily(url, concurrency, (runId, task) => {
    if (task === 'fanout' && runId === parentRunId) done.open();
  });
  const ms = await medianOfRounds(async () => {
    done = latch();
    const t = performance.now();
    parentRunId = (await family.fanout.start({ query: { n } })).runId;
    await done.done;
    return performance.now() - t;
  });
  const runId = parentRunId;
  const info = await family.fanout.wait(runId, { timeoutMs: 600_000 });
  if (info?.status !== 'success') throw new Error(`the parent ended ${info?.status}`);
  const settles = [];
  let cursor;
  do {
    const slice = await family.queue.operator.runs.list({
      parentRunId: runId,
      limit: 200,
      ...(cursor ? { cursor } : {}),
    });
    for (const child of slice.items) settles.push(Date.parse(child.updatedAt));
    cursor = slice.nextCursor ?? undefined;
  } while (cursor);
  settles.sort((a, b) => a - b);
  const quarter = Math.max(2, Math.floor(settles.length / 4));
  const span = (list) => Math.max(1, list.at(-1) - list[0]);
  const firstRate = (quarter - 1) / span(settles.slice(0, quarter));
  const lastRate = (quarter - 1) / span(settles.slice(-quarter));
  await family.queue.close();
  await family.drop();
  return { ms: Math.round(ms), rate: Math.round((n + 1) / (ms / 1000)), lastAgainstFirst: lastRate / firstRate };
}

/** `n` independent no-op runs and one more, all started at once, until the last succeeded: the median of `ROUNDS`. */
async function independent({ n, concurrency, url }) {
  let all = latch();
  let done = 0;
  const family = await openFamily(url, concurrency, (_runId, task) => {
    if (task === 'leaf' && ++done === n + 1) all.open();
  });
  const ms = await medianOfRounds(async () => {
    all = latch();
    done = 0;
    const t = performance.now();
    for (let i = 0; i <= n; i += 1000) {
      const inputs = [];
      for (let j = i; j < Math.min(n + 1, i + 1000); j++) inputs.push({ query: payload(j) });
      await family.leaf.startMany(inputs);
    }
    await all.done;
    return performance.now() - t;
  });
  await family.queue.close();
  await family.drop();
  return { ms: Math.round(ms), rate: Math.round((n + 1) / (ms / 1000)) };
}

const scenarios = { fanout, independent };
process.stdout.write(`${JSON.stringify(await scenarios[name](args))}\n`);
process.exit(0);
