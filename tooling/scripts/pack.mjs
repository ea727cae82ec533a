// Packs Docket's public packages into tarballs, as `npm publish` would (pnpm pack rewrites `workspace:` ranges to the
// versions). Used by `pnpm pack:all` and by the package experiment (package-check.mjs).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory. */
export const repo = fileURLToPath(new URL('../..', import.meta.url));

/** The public packages' folder names under `packages/`, in dependency order. */
export const PUBLIC = ['core', 'store-sqlite', 'store-postgres', 'provider-http', 'otel', 'dashboard', 'cli'].filter(
  (name) => {
    try {
      return !JSON.parse(readFileSync(join(repo, 'packages', name, 'package.json'), 'utf8')).private;
    } catch {
      return false;
    }
  },
);

/** Packs every public package into `destination`; answers each package's name and its tarball's path. */
export function packAll(destination) {
  const packed = {};
  for (const name of PUBLIC) {
    const dir = join(repo, 'packages', name);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    execFileSync('pnpm', ['pack', '--pack-destination', destination], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const prefix = `${manifest.name.replace('@', '').replace('/', '-')}-${manifest.version}.tgz`;
    const file = readdirSync(destination).find((f) => f === prefix);
    if (!file) throw new Error(`no tarball for ${manifest.name}`);
    packed[manifest.name] = join(destination, file);
  }
  return packed;
}
