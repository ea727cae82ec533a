// Root `pnpm bench`: builds the packages, then runs the benchmark package with the given arguments.
import { execFileSync } from 'node:child_process';

const root = new URL('../..', import.meta.url);
execFileSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: root, stdio: 'inherit' });
execFileSync('pnpm', ['--filter', '@docket/bench', 'bench', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
