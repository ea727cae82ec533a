import { join } from 'node:path';
import { createQueue } from '@docket/core';
import type { RunRow } from '@docket/core/store';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { applyMigrations } from '../src/migrations.js';
import { forgetVersionsOnRollback, Statements } from '../src/statements.js';
import { fileStore, tempDir } from './helpers.js';

const EMPTY = { definition_hash: '', policy: '', events: '', recovery: '' };
const VERSION_COLUMNS = 'SELECT definition_hash, policy, events, recovery FROM docket_runs WHERE run_id = ?';
const policy = { attempts: 2, timeoutMs: 5000, backoff: { baseMs: 10, maxMs: 20, jitter: 'full' as const } };

describe('the columns a task version decides, kept once per version (a real SQLite file)', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A queue on a fresh file with one task whose runs end on their first page, and a raw connection to the file. */
  async function open() {
    const { db, store } = fileStore(cleanups);
    const queue = createQueue({ store, runtime: { concurrency: 2 }, logger: false });
    cleanups.push(async () => {
      await queue.close();
    });
    const task = queue.define<{ n: number }>(
      { name: 'notice', version: '3', policy, events: ['success'], recovery: 'manual' },
      { execute: (ctx) => ctx.end() },
    );
    await queue.ready();
    const stored = db
      .prepare('SELECT hash FROM docket_definitions WHERE name = ? AND version = ?')
      .get('notice', '3') as { hash: string };
    return { db, store, queue, task, hash: stored.hash };
  }

  it('leaves them empty in every row of the run it writes, and reads the run with its version values', async () => {
    const { db, store, task, hash } = await open();
    const { runId } = await task.start({ query: { n: 1 } });
    expect(db.prepare(VERSION_COLUMNS).get(runId)).toEqual(EMPTY);
    const run = await store.getRun('default', runId);
    expect(run).toMatchObject({ definitionHash: hash, policy, events: ['success'], recovery: 'manual' });
    // The claim and the settle write the row twice more: it still leaves the version's columns to the version.
    expect(await task.wait(runId, { timeoutMs: 10_000 })).toMatchObject({ status: 'success' });
    expect(db.prepare(VERSION_COLUMNS).get(runId)).toEqual(EMPTY);
    expect(await store.getRun('default', runId)).toMatchObject({ definitionHash: hash, policy, recovery: 'manual' });
  });

  it('reads a row that holds them in full as the same run', async () => {
    const { db, store, task } = await open();
    // Due in an hour: no claim writes the row while the test rewrites it.
    const { runId } = await task.start({ query: { n: 2 }, trigger: { at: new Date(Date.now() + 3_600_000) } });
    const narrow = await store.getRun('default', runId);
    db.prepare(
      `UPDATE docket_runs SET definition_hash = ?, policy = ?, events = '["success"]', recovery = 'manual'
       WHERE run_id = ?`,
    ).run(narrow?.definitionHash, JSON.stringify(policy), runId);
    expect(await store.getRun('default', runId)).toEqual(narrow);
  });
});

describe('the task versions a connection knows, after a rollback', () => {
  it('forgets a version whose definition a rolled-back batch had written, and writes its runs in full', () => {
    const tmp = tempDir();
    const db = new Database(join(tmp.dir, 'docket.sqlite'));
    try {
      applyMigrations(db);
      const s = new Statements(db);
      const definition = { name: 't', version: '1', events: [], policy, recovery: 'automatic', limits: {} };
      // The columns `narrow` reads of a run's row: its task version and the four the version decides.
      const row = () =>
        ({
          namespace: 'default',
          task_name: 't',
          task_version: '1',
          definition_hash: 'h',
          policy: JSON.stringify(policy),
          events: '[]',
          recovery: 'automatic',
        }) as RunRow;
      db.exec('BEGIN');
      const stored = { namespace: 'default', name: 't', version: '1', hash: 'h', created_at: 0 };
      s.definitions.insertDefinition.run({ ...stored, definition: JSON.stringify(definition) });
      expect(s.versions.narrow(row()).policy).toBe('');
      db.exec('ROLLBACK');
      forgetVersionsOnRollback(s).end();
      expect(s.versions.narrow(row()).policy).toBe(JSON.stringify(policy));
    } finally {
      db.close();
      tmp.remove();
    }
  });
});
