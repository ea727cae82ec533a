import { join } from 'node:path';
import { createQueue } from '@docket/core';
import { RUN_COLUMNS } from '@docket/core/store';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BOUND_LIMIT } from '../src/bound-limit.js';
import { sqliteStore } from '../src/index.js';
import { Statements } from '../src/statements.js';
import { tempDir } from './helpers.js';

describe('the limits of the statements run on every claim, poll and feed page (a real SQLite file)', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A migrated file with three groups of two pending runs of `spread@1`, and Docket's statements on it. */
  async function store() {
    const tmp = tempDir();
    const db = new Database(join(tmp.dir, 'docket.sqlite'));
    cleanups.push(tmp.remove, () => void db.close());
    const queue = createQueue({ store: sqliteStore({ database: db }), runtime: { mode: 'producer' }, logger: false });
    const task = queue.define({ name: 'spread', version: '1', flow: { group: { concurrency: 5 } } });
    await queue.ready();
    await task.startMany(['a', 'a', 'b', 'b', 'c', 'c'].map((group, i) => ({ query: { i }, group })));
    await queue.close();
    return { db, s: new Statements(db) };
  }

  it('binds each limit in an expression SQLite does not plan with, so a new limit does not prepare them again', async () => {
    const { s } = await store();
    const hot = {
      selectClaimable: s.claim.selectClaimable,
      selectExpired: s.claim.selectExpired,
      selectDueEvents: s.callbackEvents.selectDueEvents,
      selectAbandonedEvents: s.callbackEvents.selectAbandonedEvents,
      page: s.changes.page,
      taskPage: s.changes.taskPage,
      oldest: s.changes.oldest,
      groupsDue: s.flow.groupsDue(3, 1),
    };
    for (const [name, statement] of Object.entries(hot)) {
      const limits = statement.source.match(/LIMIT [^)\s]+( \+ 0)?/g) ?? [];
      expect(limits.length, name).toBeGreaterThan(0);
      for (const limit of limits) expect(`${name}: ${limit}`).toBe(`${name}: ${BOUND_LIMIT}`);
    }
  });

  it('reads each group up to its own limit and stops at the limit for all', async () => {
    const { s } = await store();
    const part = (group: string, take: number) => ['default', 'spread', group, '1', Date.now() + 1000, take];
    const groupsOf = (rows: unknown[][]) => rows.map((row) => row[RUN_COLUMNS.indexOf('group_key')]);
    const statement = s.flow.groupsDue(3, 1);
    expect(groupsOf(statement.all(...part('a', 1), ...part('b', 2), ...part('c', 2), 10))).toEqual([
      'a',
      'b',
      'b',
      'c',
      'c',
    ]);
    expect(groupsOf(statement.all(...part('a', 2), ...part('b', 2), ...part('c', 2), 3))).toEqual(['a', 'a', 'b']);
  });
});
