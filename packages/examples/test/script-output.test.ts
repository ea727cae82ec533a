import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('pnpm example:lifecycle:<flow>', () => {
  it('writes the flow output alone on stdout, as JSON: the build before it reports on stderr', () => {
    const run = spawnSync('pnpm', ['--dir', ROOT, 'example:lifecycle:tracking'], {
      encoding: 'utf8',
      timeout: 240_000,
      env: { ...process.env, FORCE_COLOR: '0' },
    });
    expect(run.status, run.stderr).toBe(0);
    const output = JSON.parse(run.stdout) as { directory: string; result: { job: { status: string } } };
    expect(output.result.job.status).toBe('success');
    rmSync(output.directory, { recursive: true, force: true });
  }, 300_000);
});
