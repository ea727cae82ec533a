import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('importing @docket/core', () => {
  beforeAll(() => {
    if (!existsSync(`${root}dist/index.js`)) execFileSync('pnpm', ['exec', 'tsup'], { cwd: root, stdio: 'ignore' });
  }, 120_000);

  it('prints nothing and leaves nothing running', () => {
    const script = "await import('./dist/index.js'); await import('./dist/testing/index.js');";
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(child.status).toBe(0);
    expect(child.stdout).toBe('');
    expect(child.stderr).toBe('');
  });
});
