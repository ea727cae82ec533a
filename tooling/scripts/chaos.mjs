// `pnpm chaos`: the long chaos trial on SQLite (10,000 multi-page runs, 4 worker processes, 200 SIGKILLs spread over
// the work), after building the packages. Prints the figures; exits 1 when one that must be 0 is not.
// Options: --runs <n>, --kills <n>, --workers <n>, --pages <n>.
import { execFileSync } from 'node:child_process';

const root = new URL('../..', import.meta.url);
execFileSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: root, stdio: 'inherit' });
const { chaosTrial } = await import('../../packages/store-sqlite/test/fixtures/chaos.mjs');

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 ? Number(argv[at + 1]) : fallback;
};
const trial = {
  runs: option('runs', 10_000),
  kills: option('kills', 200),
  workers: option('workers', 4),
  pages: option('pages', 3),
  timeoutMs: 600_000,
};
process.stderr.write(`chaos: ${JSON.stringify(trial)}\n`);
const figures = await chaosTrial(trial);
process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
const zero = [
  'runsLost',
  'runsNotTerminal',
  'runsFailed',
  'pagesCommittedTwice',
  'duplicateBusinessRows',
  'missingBusinessRows',
];
const bad = zero.filter((key) => figures[key] !== 0);
if (figures.integrity !== 'ok') bad.push('integrity');
process.stdout.write(
  bad.length === 0 ? 'chaos: nothing lost, nothing twice\n' : `chaos: FAILED on ${bad.join(', ')}\n`,
);
process.exitCode = bad.length === 0 ? 0 : 1;
