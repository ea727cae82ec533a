import type { HistoryEntry } from '@docket/core';
import {
  type CallbackEventRecord,
  type CreateRunRequest,
  checkWrite,
  eventParams,
  historyParams,
  type PlainClaim,
  type RunRecord,
  type RunRow,
  type RunWrite,
  runChanges,
  runColumn,
  runParams,
} from '@docket/core/store';
import { SQL, sql } from 'drizzle-orm';
import { docketEvents, docketHistory, docketRuns } from '../schema.js';
import type { PgTaskVersions, Query } from '../task-versions.js';
import { notifyText } from '../wire/prepared-calls.js';
import { type Column, columnList, columnsOf, compactRows, recordset } from '../wire/recordsets.js';
import { Params, type Statement, toSql } from '../wire/statement.js';
import { familyWrites, followFamilies } from './family.js';
import { holdParts } from './hold-parts.js';

/** Something that runs a statement: a drizzle database or transaction. */
export interface Executor {
  execute(query: SQL): Promise<unknown>;
}

/** The rows a statement returned (node-postgres and PGlite both answer `{ rows }`). */
export const rowsOf = async <T>(ex: Executor, query: SQL | Statement): Promise<T[]> =>
  ((await ex.execute(query instanceof SQL ? query : toSql(query))) as { rows: T[] }).rows;

/** A `Query` on `ex`. */
export const queryOn =
  (ex: Executor): Query =>
  (statement) =>
    rowsOf(ex, statement);

/** One conditional run write: the row as it was read (locked) in this transaction, and core's write for it. */
export interface PendingWrite {
  current: RunRecord;
  write: RunWrite;
}

/** The store's qualified table names (quoted, as SQL text) and its notification channel. */
export interface Tables {
  runs: string;
  history: string;
  events: string;
  /** Flow control's tables (`sql/flow.ts`). */
  tasks: string;
  flowGroups: string;
  flowClaims: string;
  channel: string;
  /** The task versions whose values the runs' rows leave to them (`task-versions.ts`). */
  versions: PgTaskVersions;
}

/** Whether a write leaves work for some worker to pick up (a claimable run or callback events). */
const wakesWorkers = (write: RunWrite) =>
  write.run.status === 'pending' || write.run.status === 'retrying' || write.events.length > 0;

/**
 * Applies many conditional run writes in one statement and returns the ids it wrote, then walks what the landed
 * writes that touch other runs lead to (`followFamilies`). Each row is updated only if
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
  const wake = wakeNamespaces(writes, written);
  const family = familyWrites(writes, written);
  if (family.length > 0) {
    for (const namespace of await followFamilies((statement) => rowsOf(tx, statement), tables, family)) {
      wake.add(namespace);
    }
  }
  for (const namespace of wake) await tx.execute(sql.raw(notifyText(tables.channel, namespace)));
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
 * The one statement behind `applyRunWrites`: it answers the ids of the rows it wrote. With `allLocked` it answers no
 * row and fails (division by zero, which aborts the transaction) unless every write landed: for rows the transaction
 * locked, where a miss is a bug, and the COMMIT follows in the same message, too late for the caller to refuse (the
 * ids would tell the caller nothing, and each row of an answer costs the client ~1.4 µs to read). With `skipLocked`
 * a row another transaction holds is not waited for but left out, as if its guard had failed.
 */
export function runWritesStatement(
  tables: Tables,
  writes: readonly PendingWrite[],
  {
    allLocked = false,
    skipLocked = false,
    claimedFirst,
  }: { allLocked?: boolean; skipLocked?: boolean; claimedFirst?: PlainClaim } = {},
): Statement {
  // With `claimedFirst`, every write's first entry is that plain claim's, which the statement writes itself.
  const w = gatherWrites(writes, claimedFirst === undefined ? 0 : 1);
  const params = new Params();
  const v = compactRows(
    params,
    writes.length,
    recordColumns(claimedFirst !== undefined, w.folded, w.columns),
    'v',
    ['run_id'],
    writeValueOf(writes, w),
  );
  const parts = [updateRunsPart(tables, writes, params, v, w, skipLocked, claimedFirst !== undefined)];
  if (claimedFirst !== undefined) {
    const { at, actor } = claimedFirst;
    parts.push(`c AS (INSERT INTO ${tables.history} (run_id, seq, at, from_status, to_status, reason, actor, detail)
        SELECT run_id, claimed_seq, ${params.add(at, 'text')}, claimed_from, 'running', 'CLAIMED',
          ${params.add(actor, 'text')}, NULL FROM u)`);
  }
  const history = historyPart(tables, params, w);
  if (history !== null) parts.push(history);
  if (w.holds) parts.push(...holdParts(tables, params, writes));
  if (w.events.length > 0) {
    parts.push(`e AS (INSERT INTO ${tables.events} (${columnList(docketEvents)})
        SELECT ${columnList(docketEvents, 'x.')} FROM ${recordset(params, docketEvents, w.events, 'x')}
        WHERE x.run_id IN (SELECT run_id FROM u) ON CONFLICT (event_id) DO NOTHING)`);
  }
  const answer = allLocked
    ? `SELECT NULL AS run_id FROM (SELECT CASE WHEN count(*) = ${params.add(writes.length, 'integer')}
          THEN NULL ELSE 1 / (count(*) - count(*)) END AS failed FROM u) AS guard WHERE guard.failed IS NOT NULL`
    : 'SELECT run_id FROM u';
  return { text: `WITH ${parts.join(', ')} ${answer}`, params: params.values };
}

/** What a batch of run writes changes, gathered in one pass: the deltas, their columns, the entries and events. */
interface GatheredWrites {
  /** Each write's changed columns (`runChanges`). */
  deltas: Partial<RunRow>[];
  /** Every column some write changes, `run_id` left out. */
  columns: (keyof RunRow)[];
  /** The history entries to insert, in order (beyond a plain claim's first entry). */
  history: Record<string, unknown>[];
  /** The callback events to insert. */
  events: object[];
  /**
   * Whether every write brings exactly one more entry (most batches: a claim, a settle, a claim and its settle): then
   * that entry travels in the write's own recordset row and is inserted from what the update returned, with no second
   * recordset to parse and no join to find the rows that landed; `history[w]` is write w's one entry.
   */
  folded: boolean;
  /** Whether some write puts a flow hold on its task or group (`RunWrite.hold`). */
  holds: boolean;
}

/** Checks each write against its row and gathers what the batch changes (`GatheredWrites`). */
function gatherWrites(writes: readonly PendingWrite[], skip: number): GatheredWrites {
  const deltas: Partial<RunRow>[] = [];
  const changed = new Set<keyof RunRow>();
  const events: object[] = [];
  const history: Record<string, unknown>[] = [];
  let folded = writes.length > 0;
  let holds = false;
  for (let w = 0; w < writes.length; w++) {
    const { current, write } = writes[w] as PendingWrite;
    checkWrite(current, write);
    if (write.hold !== undefined) holds = true;
    const delta = runChanges(current, write.run);
    for (const column in delta) changed.add(column as keyof RunRow);
    deltas.push(delta);
    if (write.history.length - skip !== 1) folded = false;
    for (let i = skip; i < write.history.length; i++)
      history.push(
        historyParams(write.run.runId, write.history[i] as HistoryEntry) as unknown as Record<string, unknown>,
      );
    for (let e = 0; e < write.events.length; e++) events.push(eventParams(write.events[e] as CallbackEventRecord));
  }
  changed.delete('run_id');
  return { deltas, columns: [...changed], history, events, folded, holds };
}

/**
 * Each write's values in its recordset row, read where they are (no row object per write): its id, the guard's
 * expected values, the claimed-from status, its folded history entry, then each changed column from its delta, or as
 * its record holds it.
 */
function writeValueOf(writes: readonly PendingWrite[], w: GatheredWrites): (index: number, column: string) => unknown {
  return (index, column) => {
    const { current, write } = writes[index] as PendingWrite;
    switch (column) {
      case 'run_id':
        return current.runId;
      case 'expected_revision':
        return current.revision;
      case 'expected_lease_expires_at':
        return current.lease?.expiresAt ?? null;
      case 'expected_model_calls_used':
        return current.modelCallsUsed;
      case 'claimed_from':
        return current.status;
      default: {
        if (column.startsWith(ENTRY_PREFIX)) return w.history[index]?.[column.slice(ENTRY_PREFIX.length)];
        const delta = w.deltas[index] as Partial<RunRow>;
        return column in delta ? delta[column as keyof RunRow] : runColumn(write.run, column as keyof RunRow);
      }
    }
  };
}

/** The guarded `UPDATE` of the runs (CTE `u`), answering what the history inserts after it need. */
function updateRunsPart(
  tables: Tables,
  writes: readonly PendingWrite[],
  params: Params,
  v: { column(name: string): string; from: string },
  w: GatheredWrites,
  skipLocked: boolean,
  claimed: boolean,
): string {
  // A write that changes nothing still checks the row (a no-op SET keeps the statement valid).
  const sets =
    w.columns.length === 0 ? '"revision" = r."revision"' : listOf(w.columns, (c) => `"${c}" = ${v.column(c)}`);
  // The ids as one array besides the join: with `run_id = ANY(...)` the planner looks rows up by the primary key
  // instead of hashing the whole table against the recordset (whose size it cannot estimate).
  const runIds: string[] = new Array(writes.length);
  for (let i = 0; i < writes.length; i++) runIds[i] = (writes[i] as PendingWrite).current.runId;
  const ids = params.add(runIds, 'text[]');
  // With `skipLocked`, rows another transaction holds are left alone instead of waited for: it is moving them.
  const which = skipLocked
    ? `r.run_id IN (SELECT run_id FROM ${tables.runs} WHERE run_id = ANY(${ids}) FOR UPDATE SKIP LOCKED)`
    : `r.run_id = ANY(${ids})`;
  const returning = ['r.run_id'];
  if (claimed) {
    returning.push(
      `${v.column('expected_revision')} + 1 AS claimed_seq`,
      `${v.column('claimed_from')} AS claimed_from`,
    );
  }
  if (w.folded) for (const c of ENTRY_COLUMNS) returning.push(`${v.column(c.name)} AS "${c.name}"`);
  return `u AS (UPDATE ${tables.runs} AS r SET ${sets} FROM ${v.from}
        WHERE ${which} AND r.run_id = v.run_id
          AND r.revision = ${v.column('expected_revision')}
          AND r.lease_expires_at IS NOT DISTINCT FROM ${v.column('expected_lease_expires_at')}
          AND r.model_calls_used = ${v.column('expected_model_calls_used')}
        RETURNING ${returning.join(', ')})`;
}

/** The history insert (CTE `h`): from the update's answer when folded, else from a recordset of its own. */
function historyPart(tables: Tables, params: Params, w: GatheredWrites): string | null {
  if (w.folded) {
    return `h AS (INSERT INTO ${tables.history} (${columnList(docketHistory)})
        SELECT u.run_id, ${ENTRY_SELECT} FROM u)`;
  }
  if (w.history.length === 0) return null;
  const x = compactSource(params, HISTORY_COLUMNS_OF, w.history, 'x');
  return `h AS (INSERT INTO ${tables.history} (${columnList(docketHistory)})
        SELECT ${x.values} FROM ${x.from} WHERE x.run_id IN (SELECT run_id FROM u))`;
}

const RUN_ID: Column = { name: 'run_id', type: 'text' };

/** The prefix of a write's folded history entry's columns in its recordset row (`entry_seq`, `entry_at`, ...). */
const ENTRY_PREFIX = 'entry_';

/** The history columns after `run_id`, as a folded entry carries them, in the history table's order. */
const ENTRY_COLUMNS = columnsOf(docketHistory)
  .filter((c) => c.name !== 'run_id')
  .map((c) => ({ name: `${ENTRY_PREFIX}${c.name}`, type: c.type }));

/** The folded entry's columns as the history insert selects them from the update's answer. */
const ENTRY_SELECT = ENTRY_COLUMNS.map((c) => `u."${c.name}"`).join(', ');

/**
 * The columns of a run write's recordset row: the id, the guard, the claimed-from status, the folded entry, then the
 * changed columns. Pushed one by one rather than spread from arrays of several kinds (an empty literal and an array of
 * objects differ in V8's element kinds), which made the optimized statement builder be thrown away and rebuilt.
 */
function recordColumns(claimed: boolean, folded: boolean, changed: readonly string[]): Column[] {
  const columns: Column[] = [RUN_ID];
  for (let i = 0; i < GUARD.length; i++) columns.push(GUARD[i] as Column);
  if (claimed) columns.push(CLAIMED_FROM);
  if (folded) for (let i = 0; i < ENTRY_COLUMNS.length; i++) columns.push(ENTRY_COLUMNS[i] as Column);
  for (let i = 0; i < changed.length; i++) {
    const name = changed[i] as string;
    columns.push({ name, type: RUN_TYPES.get(name) as string });
  }
  return columns;
}

/** `items.map(text).join(', ')` as one string built in a loop (no array in between). */
function listOf<T>(items: readonly T[], text: (item: T) => string): string {
  let list = '';
  for (let i = 0; i < items.length; i++) list = i === 0 ? text(items[i] as T) : `${list}, ${text(items[i] as T)}`;
  return list;
}

const CLAIMED_FROM: Column = { name: 'claimed_from', type: 'text' };
const RUN_TYPES = new Map(columnsOf(docketRuns).map((c) => [c.name, c.type]));

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

/**
 * The one statement behind `insertRuns`: it answers the ids it inserted. The runs and their entries travel as compact
 * rows (`compactRows`): a value every run shares (the task, its version and definition hash, the policy, the status,
 * most counters, a parent) is one parameter, and only the values that differ (the id, the input, a key) are written
 * per row, so a batch of starts sends and parses a fraction of its rows' size.
 */
export function insertRunsStatement(tables: Tables, requests: readonly CreateRunRequest[]): Statement {
  const params = new Params();
  const runs = requests.map((r) => tables.versions.narrow(runParams(r.run)) as unknown as Record<string, unknown>);
  const history = requests.map((r) => historyParams(r.run.runId, r.history) as unknown as Record<string, unknown>);
  const v = compactSource(params, RUN_COLUMNS_OF, runs, 'v');
  const x = compactSource(params, HISTORY_COLUMNS_OF, history, 'x');
  const text = `WITH ins AS (INSERT INTO ${tables.runs} (${columnList(docketRuns)})
        SELECT ${v.values} FROM ${v.from}
        ON CONFLICT DO NOTHING RETURNING run_id),
      h AS (INSERT INTO ${tables.history} (${columnList(docketHistory)})
        SELECT ${x.values} FROM ${x.from}
        WHERE x.run_id IN (SELECT run_id FROM ins))
      SELECT run_id FROM ins`;
  return { text, params: params.values };
}

const RUN_COLUMNS_OF = columnsOf(docketRuns);
const HISTORY_COLUMNS_OF = columnsOf(docketHistory);

/**
 * Rows keyed by `run_id` (records by column name) as the source of an insert: the select list of `columns` and the
 * compact recordset it reads (`compactRows`: a value every row shares is one parameter).
 */
function compactSource(
  params: Params,
  columns: readonly Column[],
  rows: readonly Record<string, unknown>[],
  alias: string,
): { values: string; from: string } {
  const r = compactRows(params, rows.length, columns, alias, ['run_id'], (i, column) => rows[i]?.[column]);
  return { values: listOf(columns, (c) => r.column(c.name)), from: r.from };
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
  for (const namespace of wake) await tx.execute(sql.raw(notifyText(tables.channel, namespace)));
  return ids;
}
