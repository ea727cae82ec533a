// `pnpm release:check`: packs every public package as it would be published (pnpm pack rewrites workspace: ranges)
// and lints each tarball: publint (package.json fields, exports, files) and arethetypeswrong (types resolve as the
// code does; the packages are ESM only, so the esm-only profile). Exits 1 on any problem.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PUBLIC = ['core', 'store-sqlite', 'store-postgres', 'provider-http', 'otel', 'dashboard', 'cli'];
const out = mkdtempSync(join(tmpdir(), 'docket-release-check-'));
let failed = false;
try {
  execFileSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: root, stdio: 'ignore' });
  for (const name of PUBLIC) {
    const dir = join(root, 'packages', name);
    execFileSync('pnpm', ['pack', '--pack-destination', out], { cwd: dir, stdio: 'ignore' });
    const publint = spawnSync('pnpm', ['exec', 'publint', dir, '--strict'], { cwd: root, encoding: 'utf8' });
    report(`publint @docket/${name}`, publint);
  }
  for (const tarball of readdirSync(out).filter((file) => file.endsWith('.tgz'))) {
    const attw = spawnSync('pnpm', ['exec', 'attw', join(out, tarball), '--profile', 'esm-only', '--format', 'ascii'], {
      cwd: root,
      encoding: 'utf8',
    });
    report(`attw ${tarball}`, attw);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
process.stdout.write(
  failed ? 'release check: problems found\n' : 'release check: every package packs and lints clean\n',
);
process.exitCode = failed ? 1 : 0;

function report(what, result) {
  if (result.status === 0) {
    process.stdout.write(`release check: ${what}: clean\n`);
    return;
  }
  failed = true;
  process.stdout.write(`release check: ${what}: FAILED\n${result.stdout}${result.stderr}\n`);
}
