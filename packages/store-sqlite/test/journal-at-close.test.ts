import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueue } from '@docket/core';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.js';

/** The journal mode a file's header says (bytes 18 and 19: 1 for the rollback journal, 2 for WAL). */
const headerMode = (file: string) => {
  const header = readFileSync(file).subarray(18, 20);
  return header[0] === 2 && header[1] === 2 ? 'wal' : 'delete';
};

describe('SQLite: a cleanly closed file can be read without creating files beside it', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('the last close leaves the file in the rollback journal, with no -wal or -shm; the next open is WAL again', async () => {
    dir = mkdtempSync(join(tmpdir(), 'docket-journal-'));
    const file = join(dir, 'docket.sqlite');
    const open = () =>
      createQueue({ store: sqliteStore({ filename: file }), runtime: { mode: 'producer' }, logger: false });
    const first = open();
    const task = first.define({ name: 'a', version: '1' });
    await first.ready();
    expect(headerMode(file)).toBe('wal');
    const { runId } = await task.start({ query: {} });
    await first.close();
    expect(headerMode(file)).toBe('delete');
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}-shm`)).toBe(false);
    const again = open();
    const same = again.define({ name: 'a', version: '1' });
    await again.ready();
    expect(headerMode(file)).toBe('wal');
    expect((await same.get(runId))?.status).toBe('pending');
    await again.close();
  });

  it('a close while another connection has the file open leaves it in WAL, and that connection keeps working', async () => {
    dir = mkdtempSync(join(tmpdir(), 'docket-journal-'));
    const file = join(dir, 'docket.sqlite');
    const queue = createQueue({ store: sqliteStore({ filename: file }), runtime: { mode: 'producer' }, logger: false });
    const task = queue.define({ name: 'a', version: '1' });
    await queue.ready();
    const other = new Database(file);
    expect(other.pragma('journal_mode', { simple: true })).toBe('wal');
    const { runId } = await task.start({ query: {} });
    await queue.close();
    expect(headerMode(file)).toBe('wal');
    expect(other.prepare('SELECT status FROM docket_runs WHERE run_id = ?').pluck().get(runId)).toBe('pending');
    other.close();
  });
});
