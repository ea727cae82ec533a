import { join } from 'node:path';
import type { RunRecord, RunWrite } from '@docket/core/store';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BatchAbort, CommitBatcher } from '../src/commit-batcher.js';
import { sqliteStore } from '../src/index.js';
import { Statements } from '../src/statements.js';
import { FamilyBuffer, familyFirst } from '../src/writes/family-buffer.js';
import { countFinished, countMove } from '../src/writes/run-counts.js';
import { tempDir } from './helpers.js';

/** A migrated Docket file with a scratch table, and a batched commit on it whose hooks are its statements' counts. */
async function open(cleanups: (() => unknown)[]) {
  const tmp = tempDir();
  cleanups.push(tmp.remove);
  const filename = join(tmp.dir, 'docket.sqlite');
  const store = sqliteStore({ filename });
  await store.open();
  await store.close();
  const db = new Database(filename);
  cleanups.push(() => db.close());
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
  const s = new Statements(db);
  const batch = new CommitBatcher(
    db,
    (error) => error,
    512,
    (error) => error,
    s.counts,
  );
  const insert = db.prepare('INSERT INTO t (k) VALUES (?)');
  const keys = () => (db.prepare('SELECT k FROM t ORDER BY k').all() as { k: string }[]).map((r) => r.k);
  const counts = () => db.prepare('SELECT status, n FROM docket_run_counts WHERE n <> 0 ORDER BY status').all();
  const minutes = () => db.prepare('SELECT minute, n FROM docket_settled_minutes').all();
  return { db, s, batch, insert, keys, counts, minutes };
}

describe('CommitBatcher', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  it('gives an item without a savepoint that throws before writing its own error, and commits the others', async () => {
    const { batch, insert, keys } = await open(cleanups);
    const results = await Promise.allSettled([
      batch.run(() => insert.run('a')),
      batch.run(() => {
        throw new Error('the plan refused');
      }, 'none'),
      batch.run(() => insert.run('b'), 'none'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('the plan refused');
    expect(keys()).toEqual(['a', 'b']);
  });

  it('rolls back the batch for an item that failed half-way, and runs the others again on their own', async () => {
    const { batch, insert, keys } = await open(cleanups);
    let runsOfA = 0;
    const results = await Promise.allSettled([
      batch.run(() => {
        runsOfA++;
        return insert.run('a');
      }),
      batch.run(() => {
        insert.run('half');
        throw new BatchAbort(new Error('the history insert failed'));
      }, 'none'),
      batch.run(() => insert.run('b'), 'none'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('the history insert failed');
    expect(keys()).toEqual(['a', 'b']);
    expect(runsOfA).toBe(2);
  });

  it('writes the run counts of a batch once, at its end, leaving out those of an item rolled back', async () => {
    const { s, batch, counts, minutes, db } = await open(cleanups);
    const at = Date.UTC(2026, 11, 4, 5, 30, 15);
    const settle = () => {
      countMove(s, 'default', 'task', '1', 'running', 'success');
      countFinished(s, 'default', 'running', 'success', at);
    };
    let writesDuringBatch: unknown[] = [];
    await Promise.allSettled([
      batch.run(settle),
      batch.run(() => {
        settle();
        throw new Error('rolled back to its savepoint');
      }),
      batch.run(() => {
        settle();
        writesDuringBatch = counts();
      }),
    ]);
    expect(writesDuringBatch).toEqual([]);
    expect(counts()).toEqual([{ status: 'success', n: 2 }]);
    expect(minutes()).toEqual([{ minute: at - 15_000, n: 2 }]);
    // Outside a batch (a start in the application's own transaction) a count is written at once.
    db.transaction(() => countMove(s, 'default', 'task', '1', null, 'waiting'))();
    expect(counts()).toEqual([
      { status: 'success', n: 2 },
      { status: 'waiting', n: 1 },
    ]);
  });

  it('writes no count of a batch whose transaction was rolled back', async () => {
    const { s, batch, counts } = await open(cleanups);
    await Promise.allSettled([
      batch.run(() => {
        countMove(s, 'default', 'task', '1', 'running', 'failed');
        throw new BatchAbort(new Error('half-way'));
      }, 'none'),
    ]);
    expect(counts()).toEqual([]);
  });

  it("walks the families of its kept items' successful children at its end, leaving out an item rolled back", async () => {
    const { db, s: statements } = await open(cleanups);
    const walked: string[][] = [];
    const family = new FamilyBuffer((writes) => walked.push(writes.map((w) => w.write.run.runId)));
    const batch = new CommitBatcher(
      db,
      (error) => error,
      512,
      (error) => error,
      familyFirst(family, statements.counts),
    );
    const settled = (runId: string, status: RunRecord['status']) => {
      const current = { runId, status: 'running' } as RunRecord;
      const run = { runId, status, parent: { runId: 'parent', page: 1 }, children: null } as RunRecord;
      const write: RunWrite = { run, history: [], events: [] };
      return [current, write] as const;
    };
    const deferred = await Promise.allSettled([
      batch.run(() => family.defer(...settled('kept', 'success'))),
      batch.run(() => {
        family.defer(...settled('rolled-back', 'success'));
        throw new Error('the item failed after its write');
      }),
      // A failed child may fail its parent and cancel its siblings: its family is walked at once, not deferred.
      batch.run(() => family.defer(...settled('failed', 'failed'))),
    ]);
    expect(deferred.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'))).toEqual([true, 'rejected', false]);
    expect(walked).toEqual([['kept']]);
    // Outside a batch nothing waits.
    expect(family.defer(...settled('alone', 'success'))).toBe(false);
  });
});
