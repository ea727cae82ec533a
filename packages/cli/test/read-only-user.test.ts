import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue } from '@docket/core';
import { sqliteStore } from '@docket/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
/**
 * Whether this process can run the CLI as `nobody`: it must be root (to switch users), and `nobody` must be able to
 * execute this Node and read the CLI (a Node or a checkout in a private directory is not).
 */
const asNobody =
  process.getuid?.() === 0 &&
  spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, BIN, '--version'], { encoding: 'utf8' }).status === 0;

/** Runs the CLI as the unprivileged user `nobody`, who can read the file but write neither it nor its directory. */
function docketAsNobody(args: string[]) {
  const child = spawnSync('runuser', ['-u', 'nobody', '--', process.execPath, BIN, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: child.status, out: child.stdout, err: child.stderr };
}

// Switching to another user needs root (as on CI's machines) and a Node and a checkout others can read; elsewhere
// the store's own test of the journal mode (store-sqlite's journal-at-close test) still runs.
describe.runIf(asNobody)('read commands for a user who cannot write the file or its directory', () => {
  let dir: string;
  let file: string;
  let runId: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'docket-ro-'));
    file = join(dir, 'docket.sqlite');
    const queue = createQueue({ store: sqliteStore({ filename: file }), runtime: { mode: 'producer' }, logger: false });
    const task = queue.define({ name: 'report', version: '1' });
    await queue.ready();
    ({ runId } = await task.start({ query: { month: '2026-11' } }));
    await queue.close();
    chmodSync(file, 0o644);
    chmodSync(dir, 0o555);
  });
  afterAll(() => {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  });

  // Six CLI processes one after another: each may take seconds to start on a loaded machine.
  it('runs list, runs get, stats, health, schedules list and dead-letters list answer', { timeout: 120_000 }, () => {
    const listed = docketAsNobody(['--db', file, '--json', 'runs', 'list']);
    expect(listed.err).toBe('');
    expect(JSON.parse(listed.out).items.map((run: { runId: string }) => run.runId)).toEqual([runId]);
    expect(JSON.parse(docketAsNobody(['--db', file, '--json', 'runs', 'get', runId]).out).status).toBe('pending');
    for (const args of [['stats'], ['health'], ['schedules', 'list'], ['dead-letters', 'list']]) {
      const answer = docketAsNobody(['--db', file, '--json', ...args]);
      expect({ args, code: answer.code, err: answer.err }).toEqual({ args, code: 0, err: '' });
    }
  });

  it('a write command is refused with a coded error and leaves the file as it was', () => {
    const digest = () => createHash('sha256').update(readFileSync(file)).digest('hex');
    const before = digest();
    const answer = docketAsNobody(['--db', file, 'runs', 'cancel', runId, '--reason', 'no']);
    expect(answer.code).toBe(1);
    expect(answer.err).toMatch(/^[A-Z_]+: /);
    expect(digest()).toBe(before);
  });
});
