import {
  type ChangesAnswer,
  type ChangesRequest,
  type HistoryRow,
  prefixBefore,
  rowToHistory,
  type StoredChange,
  type TrimChangesRequest,
} from '@docket/core/store';
import type Database from 'better-sqlite3';
import { BOUND_LIMIT } from '../bound-limit.js';
import type { SqliteContext } from '../context.js';

/** A feed row joined with its history entry. */
type ChangeRow = HistoryRow & { position: number; task_name: string; task_version: string };

/**
 * How many positions one read or one trim step looks at. The feed has no index beside its rowid (one B-tree a commit
 * writes): a read takes the positions `(after, after + FEED_WINDOW]` and keeps its namespace's and task's rows, so its
 * cost is bounded however the namespaces and tasks interleave.
 */
export const FEED_WINDOW = 10_000;

/** The most windows one trim call walks through, so one write transaction stays short. */
const TRIM_WINDOWS = 10;

/** The statements `changeStatements` prepares. */
export interface ChangeStatements {
  /** `after`, `until`, `namespace`, `limit`: a rowid range. */
  page: Database.Statement<[number, number, string, number], ChangeRow>;
  /** `after`, `until`, `namespace`, `task`, `limit`: a rowid range. */
  taskPage: Database.Statement<[number, number, string, string, number], ChangeRow>;
  floor: Database.Statement<[string], { floor: number; trim_from: number }>;
  /** The last position of the whole feed (the rowid's end). */
  head: Database.Statement<[], { head: number | null }>;
  /** The namespace's entries in `(from, until]` with their time (`NULL` once their run was collected). */
  oldest: Database.Statement<[string, number, number, number], { position: number; at: string | null }>;
  trim: Database.Statement<[string, number, number]>;
  /** `namespace`, `floor`, `trim_from`. */
  keepFloor: Database.Statement<[string, number, number]>;
}

/** The feed's rows in a window of positions, joined with the history entries they point at. */
const joined = `SELECT c.position, c.task_name, c.task_version, h.*
  FROM docket_changes c JOIN docket_history h ON h.run_id = c.run_id AND h.seq = c.seq
  WHERE c.position > ? AND c.position <= ?`;

/** The feed's statements, prepared once per connection. */
export function changeStatements(db: Database.Database): ChangeStatements {
  return {
    page: db.prepare(`${joined} AND c.namespace = ? ORDER BY c.position ${BOUND_LIMIT}`),
    taskPage: db.prepare(`${joined} AND c.namespace = ? AND c.task_name = ? ORDER BY c.position ${BOUND_LIMIT}`),
    floor: db.prepare('SELECT floor, trim_from FROM docket_feed_floors WHERE namespace = ?'),
    head: db.prepare('SELECT max(position) AS head FROM docket_changes'),
    oldest: db.prepare(
      `SELECT c.position, h.at FROM docket_changes c LEFT JOIN docket_history h ON h.run_id = c.run_id AND h.seq = c.seq
       WHERE c.namespace = ? AND c.position > ? AND c.position <= ? ORDER BY c.position ${BOUND_LIMIT}`,
    ),
    trim: db.prepare('DELETE FROM docket_changes WHERE namespace = ? AND position > ? AND position <= ?'),
    keepFloor: db.prepare(
      `INSERT INTO docket_feed_floors (namespace, floor, trim_from) VALUES (?, ?, ?)
       ON CONFLICT (namespace) DO UPDATE SET floor = max(floor, excluded.floor), trim_from = excluded.trim_from`,
    ),
  };
}
/**
 * `Store.readChanges`: the window of positions after `after` (its namespace's rows, up to `limit`), then the floor,
 * each its own snapshot, the floor read last: a trim that lands between them makes the read say `CURSOR_EXPIRED`
 * rather than hide what it removed. A window with fewer than `limit` rows answers `through`, its end, so the next
 * read starts past the other namespaces' and tasks' rows it looked at.
 */
export function readChanges(ctx: SqliteContext, request: ChangesRequest): Promise<ChangesAnswer> {
  return ctx.read('operator.changes', ({ s }) => {
    const floorOf = () => s.changes.floor.get(request.namespace)?.floor ?? 0;
    const after = request.after ?? floorOf();
    const head = s.changes.head.get()?.head ?? 0;
    const until = Math.min(after + FEED_WINDOW, Math.max(head, after));
    const { namespace, taskName, limit } = request;
    const rows =
      taskName === null
        ? s.changes.page.all(after, until, namespace, limit)
        : s.changes.taskPage.all(after, until, namespace, taskName, limit);
    const floor = floorOf();
    if (rows.length === limit || until === after) return { changes: rows.map(changeOf), floor };
    return { changes: rows.map(changeOf), floor, through: until, more: until < head };
  });
}

/** `Store.changesHead`: the feed's last position (past it, no entry of any namespace yet), else the floor. */
export function changesHead(ctx: SqliteContext, namespace: string): Promise<number> {
  return ctx.read('queue.watch', ({ s }) =>
    Math.max(s.changes.head.get()?.head ?? 0, s.changes.floor.get(namespace)?.floor ?? 0),
  );
}

/**
 * `Store.trimChanges`: the namespace's oldest entries before `before` (and those whose run is gone), window by window
 * from where the last trim stopped (`trim_from`), in one write: it stops at the first newer entry, after `limit`
 * entries, or after `TRIM_WINDOWS` windows, and keeps where it stopped for the next call. The feed's newest row is
 * never removed: a position is the next rowid, one past the largest in the table, so removing the largest would give
 * its position again to the next entry, behind every cursor that had passed it.
 */
export function trimChanges(ctx: SqliteContext, request: TrimChangesRequest): Promise<number> {
  const before = new Date(request.before).toISOString();
  const { namespace, limit } = request;
  return ctx.write('operator.maintenance.collect', ({ s }) => {
    const kept = s.changes.floor.get(namespace);
    let from = Math.max(kept?.floor ?? 0, kept?.trim_from ?? 0);
    // The last position this trim may remove: the one before the newest.
    const last = (s.changes.head.get()?.head ?? 0) - 1;
    let trimmed = 0;
    let floor = kept?.floor ?? 0;
    for (let step = 0; step < TRIM_WINDOWS && from < last && trimmed < limit; step++) {
      const until = Math.min(from + FEED_WINDOW, last);
      const room = limit - trimmed;
      const rows = s.changes.oldest.all(namespace, from, until, room);
      const { count, key } = prefixBefore(rows, before, (row) => row.position);
      if (count > 0) {
        s.changes.trim.run(namespace, from, key);
        trimmed += count;
        floor = key;
      }
      if (count < rows.length) {
        // A newer entry: the next trim starts at it.
        if (count > 0) from = key;
        break;
      }
      // The limit reached inside the window, or the whole window done.
      from = rows.length === room ? key : until;
    }
    if (trimmed > 0 || from !== (kept?.trim_from ?? 0)) s.changes.keepFloor.run(namespace, floor, from);
    return trimmed;
  });
}

/** A read row as the store answers it. */
function changeOf(row: ChangeRow): StoredChange {
  return {
    position: row.position,
    runId: row.run_id,
    taskName: row.task_name,
    taskVersion: row.task_version,
    entry: rowToHistory(row),
  };
}
