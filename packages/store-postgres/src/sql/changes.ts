import {
  type ChangesAnswer,
  type ChangesRequest,
  type HistoryRow,
  prefixBefore,
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

/** A feed row joined with its history entry, with the namespace's floor (every column but `floor` null on no row). */
type ChangeRow = HistoryRow & { position: string | number | null; task_name: string; task_version: string };

/** The namespace's floor: the highest of its own (trimmed positions) and the feed's (staged rows removed). */
function floorOf(ctx: PgContext, namespace: string) {
  return sql`SELECT greatest(coalesce((SELECT floor FROM ${ctx.q.feedFloors} WHERE namespace = ${namespace}), 0),
          coalesce((SELECT floor FROM ${ctx.q.feed} WHERE id = 1), 0)) AS floor`;
}

/**
 * `Store.readChanges`: gives positions to the entries committed since the last read (`docket_sequence_changes`, one
 * sequencer at a time), then reads the floor and one range of the partial position index in one statement: one
 * snapshot, so the page and the floor agree (a trim that removed entries after the cursor shows in the floor). The
 * range is limited before the join with the history, so the planner never joins more entries than the page holds.
 */
export async function readChanges(ctx: PgContext, request: ChangesRequest): Promise<ChangesAnswer> {
  const { changes, history } = ctx.q;
  await sequence(ctx);
  const task = request.taskName === null ? sql`` : sql`AND task_name = ${request.taskName}`;
  const after = request.after === null ? sql`f.floor` : sql`${request.after}`;
  const rows = await rowsOf<ChangeRow & { floor: string | number }>(
    ctx.live(),
    sql`WITH f AS (${floorOf(ctx, request.namespace)})
        SELECT f.floor, p.* FROM f LEFT JOIN LATERAL (
          SELECT c.position, c.task_name, c.task_version, h.* FROM (
            SELECT position, task_name, task_version, run_id, seq FROM ${changes}
            WHERE namespace = ${request.namespace} ${task} AND position > ${after}
            ORDER BY position LIMIT ${request.limit}) c
          JOIN ${history} h ON h.run_id = c.run_id AND h.seq = c.seq) p ON true
        ORDER BY p.position`,
  );
  const found = rows.filter((row) => row.position !== null);
  return { changes: found.map(changeOf), floor: Number(rows[0]?.floor ?? 0) };
}

/** `Store.changesHead`: positions given first, then the end of the namespace's range, else its floor. */
export async function changesHead(ctx: PgContext, namespace: string): Promise<number> {
  await sequence(ctx);
  const [row] = await rowsOf<{ head: string | number | null; floor: string | number }>(
    ctx.live(),
    sql`WITH f AS (${floorOf(ctx, namespace)})
        SELECT f.floor, (SELECT max(position) FROM ${ctx.q.changes} WHERE namespace = ${namespace}
          AND position IS NOT NULL) AS head FROM f`,
  );
  return Math.max(Number(row?.head ?? 0), Number(row?.floor ?? 0));
}

/**
 * `Store.trimChanges`: the namespace's oldest positioned entries before `before` (the prefix up to the first newer
 * one, in one statement with its floor), then the staged rows nobody numbered that are as old (`trimStaged`).
 */
export async function trimChanges(ctx: PgContext, request: TrimChangesRequest): Promise<number> {
  const { changes, history, feedFloors } = ctx.q;
  const before = new Date(request.before).toISOString();
  const oldest = await rowsOf<{ position: string | number; at: string | null }>(
    ctx.live(),
    sql`SELECT c.position, h.at FROM ${changes} c LEFT JOIN ${history} h ON h.run_id = c.run_id AND h.seq = c.seq
        WHERE c.namespace = ${request.namespace} AND c.position IS NOT NULL ORDER BY c.position LIMIT ${request.limit}`,
  );
  const last = prefixBefore(oldest, before, (row) => Number(row.position));
  if (last.count > 0) {
    // A data-modifying WITH runs whether or not the statement reads it: both writes commit together.
    await rowsOf(
      ctx.live(),
      sql`WITH gone AS (DELETE FROM ${changes} WHERE namespace = ${request.namespace} AND position <= ${last.key})
          INSERT INTO ${feedFloors} (namespace, floor) VALUES (${request.namespace}, ${last.key})
          ON CONFLICT (namespace) DO UPDATE SET floor = greatest(${feedFloors}.floor, excluded.floor)`,
    );
  }
  return last.count + (await trimStaged(ctx, before, request.limit));
}

/**
 * Staged rows as old as retention were never read (a reader numbers them): where nobody reads the feed they are
 * removed unnumbered, oldest `id` first up to the first newer one. Their positions would have come after the head, so
 * the head moves one past it and the feed's floor with it: a cursor from before is `CURSOR_EXPIRED`.
 */
async function trimStaged(ctx: PgContext, before: string, limit: number): Promise<number> {
  const { changes, history, feed } = ctx.q;
  const staged = await rowsOf<{ id: string | number; at: string | null }>(
    ctx.live(),
    sql`SELECT c.id, h.at FROM ${changes} c LEFT JOIN ${history} h ON h.run_id = c.run_id AND h.seq = c.seq
        WHERE c.position IS NULL ORDER BY c.id LIMIT ${limit}`,
  );
  const last = prefixBefore(staged, before, (row) => Number(row.id));
  if (last.count === 0) return 0;
  await rowsOf(
    ctx.live(),
    sql`WITH gone AS (DELETE FROM ${changes} WHERE position IS NULL AND id <= ${last.key})
        UPDATE ${feed} SET head = head + 1, floor = head + 1 WHERE id = 1`,
  );
  return last.count;
}

/** A read row as the store answers it. */
function changeOf(row: ChangeRow): StoredChange {
  return {
    position: Number(row.position),
    runId: row.run_id,
    taskName: row.task_name,
    taskVersion: row.task_version,
    entry: rowToHistory(row),
  };
}
