import {
  type CreateRunRequest,
  checkWrite,
  eventParams,
  historyParams,
  type RunRecord,
  type RunRow,
  type RunWrite,
  runChanges,
  runColumn,
  runParams,
} from '@docket/core';
import { type SQL, sql } from 'drizzle-orm';
import { columnList, columnsOf, compactRows, recordset } from './recordsets.js';
import { docketEvents, docketHistory, docketRuns } from './schema.js';

/** Something that runs a statement: a drizzle database or transaction. */
export interface Executor {
  execute(query: SQL): Promise<unknown>;
}

/** The rows a statement returned (node-postgres and PGlite both answer `{ rows }`). */
export const rowsOf = async <T>(ex: Executor, query: SQL): Promise<T[]> =>
  ((await ex.execute(query)) as { rows: T[] }).rows;

/** One conditional run write: the row as it was read (locked) in this transaction, and core's write for it. */
export interface PendingWrite {
  current: RunRecord;
  write: RunWrite;
}

/** The store's qualified table names and its notification channel. */
export interface Tables {
  runs: SQL;
  history: SQL;
  events: SQL;
  channel: string;
}

/**
 * The ids as one array parameter: with `run_id = ANY(...)` beside the join, the planner looks rows up by the primary
 * key instead of hashing the whole table against the recordset (whose size it cannot estimate).
 */
const ids = (writes: readonly PendingWrite[]) => sql.param(writes.map((w) => w.current.runId));

/** Whether a write leaves work for some worker to pick up (a claimable run or callback events). */
const wakesWorkers = (write: RunWrite) =>
  write.run.status === 'pending' || write.run.status === 'retrying' || write.events.length > 0;

/**
 * Applies many conditional run writes in one statement and returns the ids it wrote. Each row is updated only if
 * it is still the row its plan saw (same revision, lease expiry and model call count: core's `checkWrite` makes
 * those the only columns that can change without a new revision), and its history and callback events are inserted
 * with it; then one notification if any write leaves work behind. Only the columns some write changes travel.
 */
export async function applyRunWrites(
  tx: Executor,
  tables: Tables,
  writes: readonly PendingWrite[],
): Promise<Set<string>> {
  if (writes.length === 0) return new Set();
  const updated = await rowsOf<{ run_id: string }>(tx, runWritesStatement(tables, writes));
  const written = new Set(updated.map((r) => r.run_id));
  for (const namespace of wakeNamespaces(writes, written)) {
    await tx.execute(sql`SELECT pg_notify(${tables.channel}, ${namespace})`);
  }
  return written;
}

/** The namespaces whose workers a set of writes should wake (only writes that landed, when `landed` is given). */
export function wakeNamespaces(writes: readonly PendingWrite[], landed?: ReadonlySet<string>): Set<string> {
  return new Set(
    writes
      .filter((w) => (landed === undefined || landed.has(w.current.runId)) && wakesWorkers(w.write))
      .map((w) => w.write.run.namespace),
  );
}

/**
 * The one statement behind `applyRunWrites`: it answers the ids of the rows it wrote. With `allLocked` it fails
 * (division by zero, which aborts the transaction) unless every write landed: for rows the transaction locked, where
 * a miss is a bug, and the COMMIT follows in the same message, too late for the caller to refuse.
 */
export function runWritesStatement(tables: Tables, writes: readonly PendingWrite[], allLocked = false): SQL {
  const deltas: Partial<RunRow>[] = [];
  const changed = new Set<keyof RunRow>();
  const history: object[] = [];
  const events: object[] = [];
  for (const { current, write } of writes) {
    checkWrite(current, write);
    const delta = runChanges(current, write.run);
    for (const column of Object.keys(delta) as (keyof RunRow)[]) changed.add(column);
    deltas.push(delta);
    for (const entry of write.history) history.push(historyParams(write.run.runId, entry));
    for (const event of write.events) events.push(eventParams(event));
  }
  changed.delete('run_id');
  const columns = [...changed];
  const runs = writes.map(({ current, write }, index) => {
    const delta = deltas[index] as Partial<RunRow>;
    const row: Record<string, unknown> = {
      run_id: current.runId,
      expected_revision: current.revision,
      expected_lease_expires_at: current.lease?.expiresAt ?? null,
      expected_model_calls_used: current.modelCallsUsed,
    };
    for (const column of columns) row[column] = column in delta ? delta[column] : runColumn(write.run, column);
    return row;
  });
  const types = new Map(columnsOf(docketRuns).map((c) => [c.name, c.type]));
  const v = compactRows(
    runs,
    [{ name: 'run_id', type: 'text' }, ...GUARD, ...columns.map((name) => ({ name, type: types.get(name) as string }))],
    'v',
    ['run_id'],
  );
  // A write that changes nothing still checks the row (a no-op SET keeps the statement valid).
  const sets =
    columns.length === 0
      ? sql`"revision" = r."revision"`
      : sql.join(
          columns.map((c) => sql`${sql.raw(`"${c}"`)} = ${v.column(c)}`),
          sql`, `,
        );
  const parts: SQL[] = [
    sql`u AS (UPDATE ${tables.runs} AS r SET ${sets} FROM ${v.from}
        WHERE r.run_id = ANY(${ids(writes)}::text[]) AND r.run_id = v.run_id
          AND r.revision = ${v.column('expected_revision')}
          AND r.lease_expires_at IS NOT DISTINCT FROM ${v.column('expected_lease_expires_at')}
          AND r.model_calls_used = ${v.column('expected_model_calls_used')}
        RETURNING r.run_id)`,
  ];
  if (history.length > 0) {
    const x = compactRows(history as Record<string, unknown>[], columnsOf(docketHistory), 'x', ['run_id']);
    const values = sql.join(
      columnsOf(docketHistory).map((c) => x.column(c.name)),
      sql`, `,
    );
    parts.push(sql`h AS (INSERT INTO ${tables.history} (${columnList(docketHistory)})
        SELECT ${values} FROM ${x.from} WHERE x.run_id IN (SELECT run_id FROM u))`);
  }
  if (events.length > 0) {
    parts.push(sql`e AS (INSERT INTO ${tables.events} (${columnList(docketEvents)})
        SELECT ${columnList(docketEvents, 'x.')} FROM ${recordset(docketEvents, events, 'x')}
        WHERE x.run_id IN (SELECT run_id FROM u) ON CONFLICT (event_id) DO NOTHING)`);
  }
  const answer = allLocked
    ? sql`SELECT run_id FROM u UNION ALL SELECT NULL FROM (SELECT CASE WHEN count(*) = ${writes.length}
          THEN NULL ELSE 1 / (count(*) - count(*)) END AS failed FROM u) AS guard WHERE guard.failed IS NOT NULL`
    : sql`SELECT run_id FROM u`;
  return sql`WITH ${sql.join(parts, sql`, `)} ${answer}`;
}

/** The columns a guarded write compares before it writes. */
const GUARD = [
  { name: 'expected_revision', type: 'integer' },
  { name: 'expected_lease_expires_at', type: 'double precision' },
  { name: 'expected_model_calls_used', type: 'integer' },
];

/**
 * `applyRunWrites` for rows this transaction locked when it read them: every write must land, so a row that moved
 * is a bug, never a race, and rolls the transaction back.
 */
export async function applyLockedWrites(tx: Executor, tables: Tables, writes: readonly PendingWrite[]): Promise<void> {
  const written = await applyRunWrites(tx, tables, writes);
  if (written.size !== writes.length) {
    throw new Error(`internal: ${writes.length - written.size} locked run(s) moved during their transaction`);
  }
}

/** The one statement behind `insertRuns`: it answers the ids it inserted. */
export function insertRunsStatement(tables: Tables, requests: readonly CreateRunRequest[]): SQL {
  const runs = requests.map((r) => runParams(r.run));
  const history = requests.map((r) => historyParams(r.run.runId, r.history));
  return sql`WITH ins AS (INSERT INTO ${tables.runs} (${columnList(docketRuns)})
        SELECT ${columnList(docketRuns, 'v.')} FROM ${recordset(docketRuns, runs, 'v')}
        ON CONFLICT DO NOTHING RETURNING run_id),
      h AS (INSERT INTO ${tables.history} (${columnList(docketHistory)})
        SELECT ${columnList(docketHistory, 'x.')} FROM ${recordset(docketHistory, history, 'x')}
        WHERE x.run_id IN (SELECT run_id FROM ins))
      SELECT run_id FROM ins`;
}

/**
 * Inserts new runs with their first history entries in one statement. A run whose idempotency key is already taken
 * (by a committed run, or by an earlier run of the same statement) is skipped. Returns the ids that were inserted.
 */
export async function insertRuns(
  tx: Executor,
  tables: Tables,
  requests: readonly CreateRunRequest[],
): Promise<Set<string>> {
  const inserted = await rowsOf<{ run_id: string }>(tx, insertRunsStatement(tables, requests));
  const ids = new Set(inserted.map((r) => r.run_id));
  const wake = new Set(
    requests.filter((r) => ids.has(r.run.runId) && r.run.status === 'pending').map((r) => r.run.namespace),
  );
  for (const namespace of wake) await tx.execute(sql`SELECT pg_notify(${tables.channel}, ${namespace})`);
  return ids;
}
