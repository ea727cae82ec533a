// `pnpm chaos`: the long chaos trials, after building the packages. SQLite: 10,000 multi-page runs, 4 worker processes,
// 200 SIGKILLs spread over the work. PostgreSQL (when --database-url or DOCKET_TEST_DATABASE_URL names a server):
// 2,000 runs, 2 worker processes, a backend terminated every 50-100 ms until the work ends. Both kill the producer
// twice and run events, callbacks and a schedule. Prints the figures; exits 1 when one that must be 0 is not.
// Options: --runs <n>, --kills <n>, --workers <n>, --pages <n> (SQLite); --pg-runs <n>, --database-url <url>.
import { execFileSync } from 'node:child_process';

const root = new URL('../..', import.meta.url);
execFileSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: root, stdio: 'inherit' });
const { badFigures } = await import('../chaos/trial.mjs');
const { sqliteChaosTrial } = await import('../../packages/store-sqlite/test/fixtures/chaos.mjs');
const { postgresChaosTrial } = await import('../../packages/store-postgres/test/fixtures/chaos.mjs');

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 ? argv[at + 1] : fallback;
};
const failed = [];

/** Runs one trial, prints its figures and what failed. */
async function trial(name, run, options) {
  process.stderr.write(`chaos ${name}: ${JSON.stringify(options)}\n`);
  const figures = await run(options);
  process.stdout.write(`${name}: ${JSON.stringify(figures, null, 2)}\n`);
  const bad = badFigures(figures);
  process.stdout.write(
    bad.length === 0 ? `chaos ${name}: nothing lost, nothing twice\n` : `chaos ${name}: FAILED on ${bad.join(', ')}\n`,
  );
  if (bad.length > 0) failed.push(name);
}

await trial('sqlite', sqliteChaosTrial, {
  runs: Number(option('runs', 10_000)),
  kills: Number(option('kills', 200)),
  workers: Number(option('workers', 4)),
  pages: Number(option('pages', 3)),
  gates: 100,
  timeoutMs: 600_000,
});
const url = option('database-url', process.env.DOCKET_TEST_DATABASE_URL);
if (url) {
  await trial('postgres', postgresChaosTrial, {
    url,
    runs: Number(option('pg-runs', 2_000)),
    pages: 3,
    gates: 100,
    workers: 2,
    kills: 100_000,
    killEveryMs: 50,
    timeoutMs: 300_000,
  });
} else {
  process.stdout.write('chaos postgres: skipped (give --database-url or DOCKET_TEST_DATABASE_URL)\n');
}
process.exitCode = failed.length === 0 ? 0 : 1;
