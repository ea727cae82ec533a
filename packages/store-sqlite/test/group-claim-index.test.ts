import { createQueue, RetryAfterError, type TaskFlow } from '@docket/core';
import { mayClaimByGroup } from '@docket/core/store';
import { manualClock, waitForStatus } from '@docket/core/testing';
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BY_GROUP_AT_INSERT } from '../src/flow/by-group.js';
import type { SqliteStore } from '../src/index.js';
import { fileStore } from './helpers.js';

type Row = { by_group: number; status: string };
const byGroupOf = (db: Database.Database, runId: string) =>
  db.prepare('SELECT by_group, status FROM docket_runs WHERE run_id = ?').get(runId) as Row;
const inGroupIndex = (db: Database.Database, task: string) =>
  (
    db
      .prepare(
        `SELECT count(*) AS n FROM docket_runs INDEXED BY docket_runs_group_claim
         WHERE namespace = 'default' AND task_name = ? AND claim_due_at IS NOT NULL AND by_group = 1`,
      )
      .get(task) as { n: number }
  ).n;

describe('the group claim index keeps only the runs of tasks whose claims may go by group (a real SQLite file)', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A queue on `store` with one task; closed after the test. */
  async function open(
    store: SqliteStore,
    flow: TaskFlow | undefined,
    execute = (ctx: { end(): unknown }) => ctx.end(),
  ) {
    const clock = manualClock();
    const queue = createQueue({ store, clock, runtime: { concurrency: 4 }, logger: false });
    cleanups.push(async () => {
      await queue.close();
    });
    const task = queue.define<{ group: string }>(
      // One attempt: a run that throws fails at once (the policy is the same in every queue: it is the definition's).
      { name: 'api', version: '1', policy: { attempts: 1 }, ...(flow === undefined ? {} : { flow }) },
      { execute: execute as never },
    );
    await queue.ready();
    return { queue, task, clock };
  }

  it('decides at insert from the stored task record what core decides (`mayClaimByGroup`)', () => {
    const { db } = fileStore(cleanups);
    db.exec(`CREATE TABLE IF NOT EXISTS docket_tasks (namespace TEXT, name TEXT, flow TEXT, group_hold_until INTEGER)`);
    const insert = db.prepare(`SELECT ${BY_GROUP_AT_INSERT} AS v`);
    const flows: (TaskFlow | null)[] = [
      null,
      { concurrency: 3 },
      { rate: { max: 1, perMs: 1000 } },
      { group: { concurrency: 1 } },
      { group: { rate: { max: 1, perMs: 1000 } } },
    ];
    const cases = flows.flatMap((flow) => [null, 5].map((groupHoldUntil) => ({ flow, groupHoldUntil })));
    for (const state of cases) {
      db.exec('DELETE FROM docket_tasks');
      db.prepare('INSERT INTO docket_tasks (namespace, name, flow, group_hold_until) VALUES (?, ?, ?, ?)').run(
        'default',
        'api',
        state.flow === null ? null : JSON.stringify(state.flow),
        state.groupHoldUntil,
      );
      const decided = (insert.get('default', 'api') as { v: number }).v;
      expect(decided, JSON.stringify(state)).toBe(mayClaimByGroup(state) ? 1 : 0);
    }
    expect(cases.filter((state) => mayClaimByGroup(state))).toHaveLength(7);
    expect((insert.get('default', 'unknown') as { v: number }).v).toBe(0);
  });

  it('keeps the runs of a task without group limits out of it, and a task with them in it', async () => {
    const { db, store } = fileStore(cleanups);
    const later = { trigger: { at: new Date(Date.now() + 3_600_000) } };
    const plain = await open(store, undefined);
    const { runId } = await plain.task.start({ query: { group: 'a' }, group: 'a', ...later });
    expect(byGroupOf(db, runId).by_group).toBe(0);
    expect(inGroupIndex(db, 'api')).toBe(0);
    await plain.queue.close();
    // The same task registered again with group limits: its claimable run goes into the index, and so do new ones.
    const grouped = await open(store, { group: { concurrency: 1 } });
    expect(byGroupOf(db, runId).by_group).toBe(1);
    const next = await grouped.task.start({ query: { group: 'b' }, group: 'b', ...later });
    expect(byGroupOf(db, next.runId).by_group).toBe(1);
    expect(inGroupIndex(db, 'api')).toBe(2);
  });

  it('flags a failed run too when group limits come, which a retry makes claimable again; not a finished one', async () => {
    const { db, store } = fileStore(cleanups);
    const plain = await open(store, undefined, () => {
      throw new Error('no');
    });
    const failed = await plain.task.start({ query: { group: 'a' }, group: 'a' });
    await waitForStatus(plain.task, failed.runId, 'failed');
    await plain.queue.close();
    const done = await open(store, undefined);
    const succeeded = await done.task.start({ query: { group: 'a' }, group: 'a' });
    await waitForStatus(done.task, succeeded.runId, 'success');
    await done.queue.close();
    await open(store, { group: { concurrency: 1 } });
    expect(byGroupOf(db, failed.runId)).toEqual({ by_group: 1, status: 'failed' });
    expect(byGroupOf(db, succeeded.runId)).toEqual({ by_group: 0, status: 'success' });
  });

  it('a group hold on a task without group limits flags the runs started before it, so other groups still run', async () => {
    const { db, store } = fileStore(cleanups);
    let holds = 0;
    const { task, clock } = await open(store, undefined, (ctx) => {
      const group = (ctx as unknown as { query: { group: string } }).query.group;
      if (group === 'held' && holds++ === 0) {
        throw new RetryAfterError('429 for this key', { retryAfterMs: 60_000, hold: 'group' });
      }
      return ctx.end();
    });
    // Started before any hold of the task, due in a second: out of the index at insert.
    const later = { trigger: { at: new Date(clock.now() + 1_000) } };
    const others = [
      await task.start({ query: { group: 'free' }, group: 'free', ...later }),
      await task.start({ query: { group: '' }, ...later }),
    ];
    const more = await task.start({ query: { group: 'held' }, group: 'held', ...later });
    for (const run of [...others, more]) expect(byGroupOf(db, run.runId).by_group).toBe(0);
    const held = await task.start({ query: { group: 'held' }, group: 'held' });
    await waitForStatus(task, held.runId, 'retrying');
    for (const run of [...others, more, held]) expect(byGroupOf(db, run.runId).by_group).toBe(1);
    // The held group waits for its hold (the queue's clock never reaches it); the others run when due, by group.
    clock.advance(1_000);
    for (const run of others) await waitForStatus(task, run.runId, 'success');
    expect(byGroupOf(db, more.runId).status).toBe('waiting');
    expect(byGroupOf(db, held.runId).status).toBe('retrying');
  });
});
