import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const LIFECYCLE = fileURLToPath(new URL('../dist/lifecycle/cli.js', import.meta.url));
const BATCH = fileURLToPath(new URL('../dist/batch/cli.js', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'docket-cli-args-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const run = (cli: string, args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 30_000 });

describe('a lone -- in the example commands', () => {
  it('ends the options, as POSIX says: a flag after it is refused with a message that says why', () => {
    const lifecycle = run(LIFECYCLE, ['tracking', '--', '--directory', 'd']);
    expect(lifecycle.status).toBe(2);
    expect(lifecycle.stderr).toMatch(/--directory came after a lone --, which ends the options/);
    const batch = run(BATCH, ['--', '--file', 'x.sqlite']);
    expect(batch.status).toBe(2);
    expect(batch.stderr).toMatch(/options after a lone -- are arguments/);
  });

  it('runs the command given before a lone -- with nothing after it', () => {
    const tracking = run(LIFECYCLE, ['tracking', '--']);
    expect(tracking.status).toBe(0);
    expect(JSON.parse(tracking.stdout).result.job.status).toBe('success');
  });
});
