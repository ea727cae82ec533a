// Flow-control measurements, one per process: `node flow-scenarios.mjs <name> <json args>` prints one JSON line. On
// a fresh SQLite file, or a fresh PostgreSQL schema when `url` is given (dropped at the end). The same ~100-byte
// payload and do-nothing handler as scenarios.mjs, on a task with `flow`.
import { createQueue } from '@docket/core';
import { definition, latch, payload, rate } from './common.mjs';
import { freshStore } from './fresh-store.mjs';

const [name, rawArgs] = process.argv.slice(2);
const { url, ...args } = JSON.parse(rawArgs ?? '{}');

/**
 * Fills a fresh store with n pending runs of the task with `flow`, `groups` groups of them (0: all in the default one),
 * started in turn (run j in group j mod groups) or, with `blocks`, group after group (each group's runs adjacent).
 */
async function fill(store, n, flow, groups, blocks = false) {
  const queue = createQueue({ store, runtime: { mode: 'producer' } });
  const task = queue.define({ ...definition, ...(flow ? { flow } : {}) });
  await queue.ready();
  for (let i = 0; i < n; i += 1000) {
    const inputs = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) {
      const group = blocks ? Math.floor((j * groups) / n) : j % groups;
      inputs.push({ query: payload(j), ...(groups > 0 ? { group: `g${group}` } : {}) });
    }
    await task.startMany(inputs);
  }
  await queue.close();
}

/**
 * Adds `count` claims of the task's groups to `docket_flow_claims`, as a minute of claims leaves them (1,000 groups,
 * spread over the minute before `now`): past the rate's window of a second, so no claim counts them, and kept, so
 * every prune of the group claims must pass them by.
 */
async function keepClaims(fresh, count, now) {
  const values = [];
  for (let i = 0; i < count; i++) {
    values.push(`('default', 'noop', 'group', 'k${i % 1000}', ${Math.round(now - 59_000 + (i * 58_000) / count)}, 1)`);
  }
  for (let i = 0; i < values.length; i += 1000) {
    const rows = values.slice(i, i + 1000).join(', ');
    await fresh.exec(
      `INSERT INTO {t}docket_flow_claims (namespace, task_name, scope, group_key, at, n) VALUES ${rows}`,
    );
  }
}

/**
 * Processes n no-op runs at `concurrency` with `flow` on the task (none: the plain claim), in `groups` groups (started
 * in turn, or in `blocks`), with `keptClaims` claims of other groups kept from the minute before, and answers runs
 * processed per second.
 */
async function flowProcess({ n, concurrency, flow, groups = 0, blocks = false, keptClaims = 0 }) {
  const fresh = await freshStore(url, 'flow');
  await fill(fresh.open(), n, flow, groups, blocks);
  if (keptClaims > 0) await keepClaims(fresh, keptClaims, Date.now());
  const all = latch();
  let done = 0;
  const queue = createQueue({ store: fresh.open(), runtime: { mode: 'consumer', concurrency } });
  queue.define(
    { ...definition, ...(flow ? { flow } : {}) },
    {
      execute(ctx) {
        if (++done === n) all.open();
        return ctx.end();
      },
    },
  );
  const t = performance.now();
  await queue.ready();
  await all.done;
  const ms = performance.now() - t;
  await queue.close();
  await fresh.drop();
  return { rate: rate(n, ms) };
}

/**
 * The runs holding a lease on average from the first claim to the last end (the time-weighted mean), from the
 * changes feed: each run's lease from its `CLAIMED` entry to its next entry, by the times those entries carry.
 */
async function leasedOnAverage(queue) {
  const claimedAt = new Map();
  let area = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  let after;
  for (;;) {
    const page = await queue.operator.changes({ limit: 1000, ...(after ? { after } : {}) });
    if (page.items.length === 0) break;
    after = page.next;
    for (const change of page.items) {
      const at = Date.parse(change.at);
      const since = claimedAt.get(change.runId);
      if (since !== undefined) {
        area += at - since;
        last = Math.max(last, at);
        claimedAt.delete(change.runId);
      }
      if (change.reason === 'CLAIMED') {
        claimedAt.set(change.runId, at);
        first = Math.min(first, at);
      }
    }
  }
  return Math.round((area / (last - first)) * 100) / 100;
}

/**
 * A backlog of n runs whose pages take `pageMs`, on a task limited to `limit` at once, at runtime concurrency 64:
 * answers the runs leased on average (`leasedOnAverage`) and the pages in flight on average (the time-weighted mean
 * from the handlers' start and end; a lease also spans the claim's and the settle's commits).
 */
async function flowConcurrency({ n, limit, pageMs }) {
  const fresh = await freshStore(url, 'flow');
  await fill(fresh.open(), n, { concurrency: limit }, 0);
  const all = latch();
  let done = 0;
  let inFlight = 0;
  let area = 0;
  let last = 0;
  const step = () => {
    const now = performance.now();
    area += inFlight * (now - last);
    last = now;
  };
  const queue = createQueue({ store: fresh.open(), runtime: { mode: 'consumer', concurrency: 64 } });
  queue.define(
    { ...definition, flow: { concurrency: limit } },
    {
      async execute(ctx) {
        step();
        inFlight++;
        await new Promise((resolve) => setTimeout(resolve, pageMs));
        step();
        inFlight--;
        if (++done === n) all.open();
        return ctx.end();
      },
    },
  );
  await queue.ready();
  last = performance.now();
  const t = last;
  await all.done;
  step();
  const mean = area / (performance.now() - t);
  const leased = await leasedOnAverage(queue);
  await queue.close();
  await fresh.drop();
  return { leased, pages: Math.round(mean * 100) / 100 };
}

/**
 * A backlog of 5R runs on a task limited to R claims a second: answers the claims per second after the first
 * window's burst (the runs claimed after it, over the time from its claims to the last claim).
 */
async function flowRate({ perSecond }) {
  const n = 5 * perSecond;
  const fresh = await freshStore(url, 'flow');
  const flow = { rate: { max: perSecond, perMs: 1000 } };
  await fill(fresh.open(), n, flow, 0);
  const all = latch();
  const claimedAt = [];
  const queue = createQueue({ store: fresh.open(), runtime: { mode: 'consumer', concurrency: 256 } });
  queue.define(
    { ...definition, flow },
    {
      execute(ctx) {
        claimedAt.push(performance.now());
        if (claimedAt.length === n) all.open();
        return ctx.end();
      },
    },
  );
  await queue.ready();
  await all.done;
  await queue.close();
  await fresh.drop();
  const first = claimedAt[0];
  const last = claimedAt[n - 1];
  return { rate: Math.round((n - perSecond) / ((last - first) / 1000)) };
}

const scenarios = { flowProcess, flowConcurrency, flowRate };
const result = await scenarios[name](args);
process.stdout.write(`${JSON.stringify(result)}\n`);
