// Root `pnpm bench`: builds the packages, runs the benchmark package with the given arguments, then formats the
// page it wrote (docs/benchmarks.md) the way `pnpm lint` expects.
import { execFileSync } from 'node:child_process';

const root = new URL('../..', import.meta.url);
execFileSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: root, stdio: 'inherit' });
execFileSync('pnpm', ['--filter', '@docket/bench', 'bench', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
execFileSync('pnpm', ['exec', 'biome', 'format', '--write', 'docs/benchmarks.md'], { cwd: root, stdio: 'ignore' });
