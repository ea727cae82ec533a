// `pnpm release:check`: packs every public package as it would be published (pnpm pack rewrites workspace: ranges)
// and lints each tarball: publint (package.json fields, exports, files) and arethetypeswrong (types resolve as the
// code does; the packages are ESM only, so the esm-only profile); and checks that every changeset names a package to
// release (a changeset whose front matter a formatter broke would be released as nothing). Exits 1 on any problem.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
  checkChangesets();
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

/** Reports each changeset file that `changeset status` reads as releasing no package. */
function checkChangesets() {
  const status = join(out, 'changesets.json');
  execFileSync('pnpm', ['exec', 'changeset', 'status', '--output', status], { cwd: root, stdio: 'ignore' });
  const read = JSON.parse(readFileSync(status, 'utf8')).changesets;
  const files = readdirSync(join(root, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
  for (const file of files) {
    const id = file.slice(0, -3);
    const releases = read.find((c) => c.id === id)?.releases.length ?? 0;
    report(`changeset ${file}`, {
      status: releases > 0 ? 0 : 1,
      stdout: releases > 0 ? '' : 'names no package to release: check its front matter\n',
      stderr: '',
    });
  }
}
