// The flow-control rows of `pnpm bench`, on SQLite and on PostgreSQL: a task with limits far above the machine against the same task
// without `flow`, the leases a concurrency limit keeps under a backlog, the rate a rate limit reaches, and claims
// across 1,000 groups against one group, and with a minute of group claims kept.
import { fileURLToPath } from 'node:url';

const FLOW_SCENARIOS = fileURLToPath(new URL('./flow-scenarios.mjs', import.meta.url));

/** Limits no machine here reaches: 10,000 at once and 100,000 claims a second, per task and per group. */
const FAR_ABOVE = { concurrency: 10_000, rate: { max: 100_000, perMs: 1000 } };

/**
 * Adds the flow rows for one store (`url` for PostgreSQL, none for SQLite): `scenario(name, args, file)` runs one
 * measurement, `inTurns` alternates them, `add` records a row (see run.mjs).
 */
export async function flowSection({ quick, concurrency, scenario, inTurns, add, log, store, url }) {
  const flow = (name, args) => scenario(name, { ...args, ...(url ? { url } : {}) }, FLOW_SCENARIOS);
  const n = quick ? 2_000 : 20_000;
  log(`flow control on ${store}, n=${n}`);
  const [limited, plain] = await inTurns([
    () => flow('flowProcess', { n, concurrency, flow: { ...FAR_ABOVE, group: FAR_ABOVE } }),
    () => flow('flowProcess', { n, concurrency }),
  ]);
  add(
    `processed/s with flow limits far above the machine (${store})`,
    `n=${n}`,
    limited.rate,
    plain.rate,
    'the same task without flow, same run',
    0.9,
  );
  const groups = quick ? 100 : 1000;
  const byGroup = { n: groups * 10, concurrency, flow: { group: FAR_ABOVE } };
  // A minute of claims of 1,000 groups at 1,200 a second, as a long-running group rate keeps them.
  const keptClaims = quick ? 7_200 : 72_000;
  const [many, blocks, one, kept] = await inTurns([
    () => flow('flowProcess', { ...byGroup, groups }),
    () => flow('flowProcess', { ...byGroup, groups, blocks: true }),
    () => flow('flowProcess', { ...byGroup, groups: 1 }),
    () => flow('flowProcess', { ...byGroup, groups, keptClaims }),
  ]);
  add(
    `processed/s by group, group limits set (${store})`,
    `${groups} groups of 10, started in turn`,
    many.rate,
    one.rate,
    `one group of ${groups * 10}, same run`,
    0.8,
  );
  // The same claims with each group's runs adjacent in the table: what the walk costs apart from the pages it scatters.
  add(
    `processed/s by group, group limits set (${store})`,
    `${groups} groups of 10, started group by group`,
    blocks.rate,
    one.rate,
    `one group of ${groups * 10}, same run`,
    null,
  );
  // Every claim prunes the group claims past the window: a range of a time index, whatever is kept before it.
  add(
    `processed/s by group, a minute of group claims kept (${store})`,
    `${groups} groups of 10, ${keptClaims.toLocaleString('en-US')} claims kept`,
    kept.rate,
    many.rate,
    'the same with no claims kept, same run',
    0.9,
  );
  const limit = 8;
  const leased = await flow('flowConcurrency', { n: quick ? 200 : 1000, limit, pageMs: 20 });
  log(`  pages in flight on average: ${leased.pages} of ${limit}`);
  add(
    `runs leased on average, concurrency limit under a backlog (${store})`,
    `limit ${limit}, 20 ms pages`,
    leased.leased,
    limit,
    'the limit',
    0.9,
  );
  const perSecond = quick ? 100 : 500;
  const reached = await flow('flowRate', { perSecond });
  add(
    `claims/s under a rate limit, after the first window (${store})`,
    `limit ${perSecond}/s`,
    reached.rate,
    perSecond,
    'the limit',
    0.9,
  );
}
