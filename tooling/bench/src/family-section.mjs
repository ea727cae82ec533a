// The child-run rows of `pnpm bench`: a parent with 1,000 no-op children from its start to its success, against
// 1,000 independent runs and one more, on SQLite and on PostgreSQL; and whether the last children run as fast as the
// first (each settle counts on the parent, which costs the same whatever the number already settled).
import { fileURLToPath } from 'node:url';

const FAMILY_SCENARIOS = fileURLToPath(new URL('./family-scenarios.mjs', import.meta.url));

/**
 * Adds the rows for one store (`url` for PostgreSQL, none for SQLite): `scenario(name, args, file)` runs one
 * measurement, `inTurns` alternates them, `add` records a row (see run.mjs).
 */
export async function familySection({ quick, concurrency, scenario, inTurns, add, log, store, url }) {
  const family = (name, args) => scenario(name, { ...args, ...(url ? { url } : {}) }, FAMILY_SCENARIOS);
  const n = quick ? 200 : 1000;
  log(`child runs on ${store}, n=${n}`);
  // Each measurement lasts a few hundred milliseconds, where a stall of the shared machine weighs: seven in turns.
  const [parent, runs] = await inTurns(
    [() => family('fanout', { n, concurrency }), () => family('independent', { n, concurrency })],
    7,
  );
  add(
    `runs/s, one parent with ${n} children (${store})`,
    `${n} children`,
    parent.rate,
    runs.rate,
    `${n} independent runs and one more, same run`,
    0.8,
  );
  // At 16 slots the children run as a steady stream (at hundreds of slots they run in a few bursts, which no quarter
  // measures well): a counter that cost more as it grew would slow the last quarter.
  const [steady] = await inTurns([() => family('fanout', { n, concurrency: 16 })], 5, 'lastAgainstFirst');
  add(
    `children run/s, the last quarter against the first (${store})`,
    `${n} children, 16 slots`,
    steady.lastAgainstFirst,
    1,
    'the first quarter (1 = the same)',
    0.8,
  );
}
