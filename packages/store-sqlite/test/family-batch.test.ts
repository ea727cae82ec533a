import { join } from 'node:path';
import { createQueue } from '@docket/core';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.js';
import { tempDir } from './helpers.js';

describe('children settled in one batched commit (a real SQLite file)', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('counts the children that succeed in one batch on their parent in one statement, and wakes it once', async () => {
    const tmp = tempDir();
    const db = new Database(join(tmp.dir, 'docket.sqlite'));
    const queue = createQueue({ store: sqliteStore({ database: db }), runtime: { concurrency: 8 }, logger: false });
    cleanups.push(
      tmp.remove,
      () => void db.close(),
      async () => {
        await queue.close();
      },
    );
    const seen: string[] = [];
    const leaf = queue.define<number>({ name: 'leaf', version: '1' }, { execute: (ctx) => ctx.end() });
    const parent = queue.define<null>(
      { name: 'parent', version: '1' },
      {
        execute(ctx) {
          if (ctx.page === 1) return ctx.next(null, { children: [1, 2, 3].map((query) => ({ task: leaf, query })) });
          seen.push(...ctx.children.map((child) => child.status));
          return ctx.end();
        },
      },
    );
    await queue.ready();
    // Every change of a parent's settled count, as the statements that made it left it.
    db.exec(`CREATE TABLE counted (before INTEGER, after INTEGER);
      CREATE TRIGGER counted_log AFTER UPDATE OF children ON docket_runs
      WHEN json_extract(old.children, '$.settled') <> json_extract(new.children, '$.settled')
      BEGIN INSERT INTO counted VALUES (json_extract(old.children, '$.settled'), json_extract(new.children, '$.settled')); END`);
    const { runId } = await parent.start({ query: null });
    const done = await parent.wait(runId, { timeoutMs: 10_000 });
    expect(done?.status).toBe('success');
    expect(seen).toEqual(['success', 'success', 'success']);
    // The three children were claimed together and their pages ended in one turn: one batch, one count of three.
    expect(db.prepare('SELECT before, after FROM counted').all()).toEqual([{ before: 0, after: 3 }]);
    const reasons = (await queue.operator.runs.history(runId)).map((entry) => entry.reason);
    expect(reasons.filter((reason) => reason === 'CHILDREN_SETTLED')).toHaveLength(1);
  });
});
