import { createQueue, type HistoryEntry } from '@docket/core';
import { planClaim, type RunRecord, type RunWrite, rowToHistory, transition } from '@docket/core/store';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { tablesIn } from '../src/context.js';
import { postgresStore } from '../src/index.js';
import { runWritesStatement } from '../src/writes/run-writes.js';
import { backendForTests, DATABASE_URL, freshSchema } from './helpers.js';

describe('the run writes statement for locked rows (allLocked)', () => {
  const { db } = backendForTests();

  /** Two started runs on a fresh schema, as stored, and the schema's tables. */
  async function setup() {
    const schema = freshSchema();
    const store = postgresStore(db().options(schema));
    const queue = createQueue({ store, runtime: { mode: 'producer' } });
    const task = queue.define({ name: 'locked', version: '1' });
    await queue.ready();
    const runs: RunRecord[] = [];
    for (const n of [1, 2]) runs.push((await store.getRun('default', (await task.start({ query: { n } })).runId))!);
    await queue.close();
    const tables = tablesIn(schema);
    return { schema, runs, tables };
  }

  /** Runs `work` with a query function inside a transaction (on one connection) that is rolled back afterwards. */
  async function rolledBack<T>(work: (query: (q: string, p?: unknown[]) => Promise<unknown[]>) => Promise<T>) {
    const client = DATABASE_URL ? new pg.Client(DATABASE_URL) : null;
    await client?.connect();
    const query = async (q: string, p?: unknown[]) =>
      client ? (await client.query(q, p as unknown[])).rows : await db().query(q, p);
    await query('BEGIN');
    try {
      return await work(query);
    } finally {
      await query('ROLLBACK');
      await client?.end();
    }
  }

  /** Runs `text` in a rolled-back transaction, answering its rows or its error. */
  const attempt = (text: string, params: readonly unknown[]): Promise<{ rows?: unknown[]; error?: Error }> =>
    rolledBack(async (query) => {
      try {
        return { rows: await query(text, [...params]) };
      } catch (error) {
        return { error: error as Error };
      }
    });

  it('answers no row when every write lands, and aborts when one row is not the one its plan saw', async () => {
    const { schema, runs, tables } = await setup();
    const now = Date.now();
    const claims = runs.map((current) => ({ current, write: planClaim(current, 'worker:x', 30_000, now)! }));
    const landed = runWritesStatement(tables, claims, { allLocked: true });
    expect(await attempt(landed.text, landed.params)).toEqual({ rows: [] });
    // The second run as a plan would see it a revision later than it is stored: its guard fails.
    const [first, second] = runs as [RunRecord, RunRecord];
    const moved = { ...second, revision: second.revision + 1 };
    const missing = runWritesStatement(
      tables,
      [claims[0]!, { current: moved, write: planClaim(moved, 'worker:x', 30_000, now)! }],
      { allLocked: true },
    );
    expect((await attempt(missing.text, missing.params)).error?.message).toMatch(/division by zero/);
    // Without allLocked the same writes answer the id that landed.
    const guarded = runWritesStatement(tables, [claims[0]!, { current: moved, write: planClaim(moved, 'w', 1, now)! }]);
    expect((await attempt(guarded.text, guarded.params)).rows).toEqual([{ run_id: first.runId }]);
    await db().query(`DROP SCHEMA "${schema}" CASCADE`);
  });

  /** Runs `text` in a rolled-back transaction and answers the history rows of `runIds` it left, in seq order. */
  const historyAfter = (text: string, params: readonly unknown[], history: string, runIds: string[]) =>
    rolledBack(async (query) => {
      await query(text, [...params]);
      const rows = await query(`SELECT * FROM ${history} WHERE run_id = ANY($1) ORDER BY run_id, seq`, [runIds]);
      return rows.map((row) => ({ runId: (row as { run_id: string }).run_id, ...rowToHistory(row as never) }));
    });

  /** The history entries of `writes` as the table should hold them after the statement, in the same order. */
  const expected = (writes: { write: RunWrite }[], from = 0) =>
    writes
      .flatMap(({ write }) => write.history.slice(from).map((entry) => ({ runId: write.run.runId, ...entry })))
      .sort((a, b) => a.runId.localeCompare(b.runId) || a.seq - b.seq);

  /** Claims `current` and settles it with `end`, as a held claim writes it: two entries, CLAIMED first. */
  function claimAndEnd(current: RunRecord, actor: string, now: number): RunWrite {
    const claimed = planClaim(current, actor, 30_000, now)!;
    const ended = transition(claimed.run, { type: 'page_end', actor, leaseToken: claimed.run.fence }, now + 1);
    if (!ended.ok) throw new Error('the settle was refused');
    return { run: ended.run, history: [...claimed.history, ended.history], events: ended.events };
  }

  it("carries a write's one history entry in its own recordset row, values that differ included", async () => {
    const { schema, runs, tables } = await setup();
    const now = Date.now();
    const [first, second] = runs as [RunRecord, RunRecord];
    const claims = [
      { current: first, write: planClaim(first, 'worker:a', 30_000, now)! },
      { current: second, write: planClaim(second, 'worker:b', 30_000, now + 7)! },
    ];
    // A detail on one entry only: it travels per row, the columns both entries share travel once.
    const entry = claims[1]!.write.history[0] as HistoryEntry;
    claims[1]!.write.history[0] = { ...entry, detail: { note: 'only here' } };
    const statement = runWritesStatement(tables, claims, { allLocked: true });
    expect(statement.text.match(/json_to_recordset/g)).toHaveLength(1);
    const ids = runs.map((r) => r.runId);
    const claimed = await historyAfter(statement.text, statement.params, tables.history, ids);
    expect(claimed.filter((e) => e.seq > 1)).toEqual(expected(claims));
    // A held claim's write: the statement writes CLAIMED itself, the settle's entry rides in the row.
    const held = runs.map((current, i) => ({ current, write: claimAndEnd(current, `worker:${i}`, now) }));
    const claim = { actor: 'worker:0', leaseExpiresAt: now + 30_000, at: held[0]!.write.history[0]!.at };
    const both = runWritesStatement(tables, held, { allLocked: true, claimedFirst: claim });
    expect(both.text.match(/json_to_recordset/g)).toHaveLength(1);
    const after = await historyAfter(both.text, both.params, tables.history, ids);
    expect(after.filter((e) => e.reason === 'COMPLETED')).toEqual(expected(held, 1));
    expect(after.filter((e) => e.reason === 'CLAIMED')).toHaveLength(2);
    // Writes with other counts of entries (two for one run, one for the other) use a recordset of their own.
    const mixed = [held[0]!, claims[1]!];
    const apart = runWritesStatement(tables, mixed, { allLocked: true });
    expect(apart.text.match(/json_to_recordset/g)).toHaveLength(2);
    const written = await historyAfter(apart.text, apart.params, tables.history, ids);
    expect(written.filter((e) => e.seq > 1)).toEqual(expected(mixed));
    await db().query(`DROP SCHEMA "${schema}" CASCADE`);
  });
});
