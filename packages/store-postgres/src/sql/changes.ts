import {
  type ChangesAnswer,
  type ChangesRequest,
  type HistoryRow,
  rowToHistory,
  type StoredChange,
  type TrimChangesRequest,
} from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PgContext } from '../context.js';
import { sqlState } from '../errors.js';
import { rowsOf } from '../writes/run-writes.js';

/** How many entries one call of the sequencer gives positions to. */
const SEQUENCE_AT_MOST = 10_000;

/**
 * Gives positions to the entries committed since the last call. The function runs as its owner (`SECURITY
 * DEFINER`), so a role that may only read the tables can call it; in a read-only transaction (a standby, a session
 * set read-only) it cannot write, and the read goes on with the positions other readers gave.
 */
async function sequence(ctx: PgContext): Promise<number> {
  try {
    const [row] = await rowsOf<{ given: string | number }>(
      ctx.live(),
      sql`SELECT ${sql.raw(ctx.sequencer)}(${SEQUENCE_AT_MOST}::integer) AS given`,
    );
    return Number(row?.given ?? 0);
  } catch (error) {
    if (sqlState(error) !== READ_ONLY_TRANSACTION) throw error;
    return 0;
  }
}

/** SQLSTATE `read_only_sql_transaction`. */
const READ_ONLY_TRANSACTION = '25006';

/** A feed row joined with its history entry. */
type ChangeRow = HistoryRow & { position: string | number; task_name: string; task_version: string };

/**
 * `Store.readChanges`: gives positions to the entries committed since the last read (`docket_sequence_changes`, one
 * sequencer at a time), then one range of the partial position index, then the floor, each in its own snapshot: the
 * floor read last, so a trim landing in between makes the read say `CURSOR_EXPIRED`.
 */
export async function readChanges(ctx: PgContext, request: ChangesRequest): Promise<ChangesAnswer> {
  const db = ctx.live();
  const { changes, history, feedFloors } = ctx.q;
  await sequence(ctx);
  const floorOf = async () => {
    const [row] = await rowsOf<{ floor: string | number }>(
      db,
      sql`SELECT floor FROM ${feedFloors} WHERE namespace = ${request.namespace}`,
    );
    return Number(row?.floor ?? 0);
  };
  const after = request.after ?? (await floorOf());
  const task = request.taskName === null ? sql`` : sql`AND c.task_name = ${request.taskName}`;
  const rows = await rowsOf<ChangeRow>(
    db,
    sql`SELECT c.position, c.task_name, c.task_version, h.* FROM ${changes} c
        JOIN ${history} h ON h.run_id = c.run_id AND h.seq = c.seq
        WHERE c.namespace = ${request.namespace} ${task} AND c.position > ${after}
        ORDER BY c.position LIMIT ${request.limit}`,
  );
  return { changes: rows.map(changeOf), floor: await floorOf() };
}

/** `Store.changesHead`: positions given first, then the end of the namespace's range, else its floor. */
export async function changesHead(ctx: PgContext, namespace: string): Promise<number> {
  const db = ctx.live();
  await sequence(ctx);
  const [row] = await rowsOf<{ head: string | number | null }>(
    db,
    sql`SELECT coalesce(
          (SELECT max(position) FROM ${ctx.q.changes} WHERE namespace = ${namespace} AND position IS NOT NULL),
          (SELECT floor FROM ${ctx.q.feedFloors} WHERE namespace = ${namespace}), 0) AS head`,
  );
  return Number(row?.head ?? 0);
}

/**
 * `Store.trimChanges`: gives positions to what is staged, reads the namespace's oldest positioned entries with their time (none once their run was
 * collected), then removes the prefix before `before` and raises the floor in one statement.
 */
export async function trimChanges(ctx: PgContext, request: TrimChangesRequest): Promise<number> {
  const db = ctx.live();
  const { changes, history, feedFloors } = ctx.q;
  const before = new Date(request.before).toISOString();
  // Retention numbers everything staged first (10,000 rows a transaction), so staged rows never pile up where
  // nobody reads the feed: a deployment without readers pays the numbering once per collection.
  while ((await sequence(ctx)) === SEQUENCE_AT_MOST);
  const oldest = await rowsOf<{ position: string | number; at: string | null }>(
    db,
    sql`SELECT c.position, h.at FROM ${changes} c LEFT JOIN ${history} h ON h.run_id = c.run_id AND h.seq = c.seq
        WHERE c.namespace = ${request.namespace} AND c.position IS NOT NULL ORDER BY c.position LIMIT ${request.limit}`,
  );
  let last = 0;
  let removed = 0;
  for (const row of oldest) {
    if (row.at !== null && row.at >= before) break;
    last = Number(row.position);
    removed++;
  }
  if (removed === 0) return 0;
  await rowsOf(
    db,
    // A data-modifying WITH runs whether or not the statement reads it: both writes commit together.
    sql`WITH gone AS (DELETE FROM ${changes} WHERE namespace = ${request.namespace} AND position <= ${last})
        INSERT INTO ${feedFloors} (namespace, floor) VALUES (${request.namespace}, ${last})
        ON CONFLICT (namespace) DO UPDATE SET floor = greatest(${feedFloors}.floor, excluded.floor)`,
  );
  return removed;
}

function changeOf(row: ChangeRow): StoredChange {
  return {
    position: Number(row.position),
    runId: row.run_id,
    taskName: row.task_name,
    taskVersion: row.task_version,
    entry: rowToHistory(row),
  };
}
