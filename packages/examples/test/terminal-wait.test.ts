import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/lifecycle/cli.js', import.meta.url));
const cwd = mkdtempSync(join(tmpdir(), 'docket-terminal-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
// Far enough ahead that the run is still waiting once the process has started: loading drizzle-orm takes about a
// second on Node.js 24 (its large package.json is read once per module), a tenth of that on Node.js 20.
const dueIn = (leadMs: number) => new Date(Date.now() + leadMs).toISOString();
const dueSoon = () => dueIn(4000);

/** Runs the scheduled flow on a pseudo-terminal, again with a doubled lead while the process started too late to wait. */
function onTerminal(leadMs = 4000): { status: number | null; stdout: string } {
  const run = spawnSync(
    '/usr/bin/script',
    ['-qec', `${process.execPath} ${CLI} scheduled --due-at ${dueIn(leadMs)} --wait-ms ${leadMs + 4000}`, '/dev/null'],
    { cwd, encoding: 'utf8', timeout: 60_000 },
  );
  const job = /"at": "([^"]+)"[\s\S]*?"createdAt": "([^"]+)"/.exec(run.stdout);
  const startedLate = job !== null && Date.parse(job[2] as string) >= Date.parse(job[1] as string) - 500;
  return startedLate && leadMs < 16_000 ? onTerminal(leadMs * 2) : run;
}

// util-linux `script` gives the command a pseudo-terminal, as a person's shell would.
describe.runIf(existsSync('/usr/bin/script'))('the scheduled flow on a terminal', () => {
  it('shows what it waits for and the time left on a terminal', () => {
    const run = onTerminal();
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/waiting for the due time [^,]+, \d+ ms left/);
    expect(run.stdout).toMatch(/"status": "success"/);
  }, 120_000);

  it('shows nothing but the result when output is not a terminal', () => {
    const run = spawnSync(process.execPath, [CLI, 'scheduled', '--due-at', dueSoon(), '--wait-ms', '8000'], {
      cwd,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout).result.job.status).toBe('success');
  });
});
