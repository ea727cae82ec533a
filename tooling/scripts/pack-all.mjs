// `pnpm pack:all [--out <dir>]`: builds the packages and writes one installable tarball per public package into
// `<dir>` (default `packs/` at the repository's root, git-ignored), then prints the `npm install` line that installs
// them into an application.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { packAll, repo } from './pack.mjs';

const at = process.argv.indexOf('--out');
const out = resolve(at >= 0 ? process.argv[at + 1] : resolve(repo, 'packs'));
mkdirSync(out, { recursive: true });
execFileSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: repo, stdio: 'inherit' });
const packed = packAll(out);
process.stderr.write(`wrote ${Object.keys(packed).length} tarballs to ${out}\n`);
const line = Object.values(packed)
  .map((file) => JSON.stringify(file))
  .join(' ');
process.stdout.write(`npm install ${line}\n`);
