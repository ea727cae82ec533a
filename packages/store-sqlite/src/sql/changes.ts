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
import type { SqliteContext } from '../context.js';

/** A feed row joined with its history entry. */
type ChangeRow = HistoryRow & { position: number; task_name: string; task_version: string };

/** The statements `changeStatements` prepares. */
export interface ChangeStatements {
  /** `namespace`, `after`, `limit`: a range of `docket_changes_namespace`. */
  page: Database.Statement<[string, number, number], ChangeRow>;
  /** `namespace`, `task`, `after`, `limit`: a range of `docket_changes_task`. */
  taskPage: Database.Statement<[string, string, number, number], ChangeRow>;
  floor: Database.Statement<[string], { floor: number }>;
  head: Database.Statement<[string], { head: number | null }>;
  /** The namespace's oldest entries with their time (`NULL` once their run was collected). */
  oldest: Database.Statement<[string, number], { position: number; at: string | null }>;
  trim: Database.Statement<[string, number]>;
  raiseFloor: Database.Statement<[string, number]>;
}

/** The feed read through one index, joined with the history entries it points at. */
const joined = (index: string) => `SELECT c.position, c.task_name, c.task_version, h.*
  FROM docket_changes c INDEXED BY ${index} JOIN docket_history h ON h.run_id = c.run_id AND h.seq = c.seq`;

/** The feed's statements, prepared once per connection. */
export function changeStatements(db: Database.Database): ChangeStatements {
  return {
    page: db.prepare(
      `${joined('docket_changes_namespace')} WHERE c.namespace = ? AND c.position > ? ORDER BY c.position LIMIT ?`,
    ),
    taskPage: db.prepare(
      `${joined('docket_changes_task')}
       WHERE c.namespace = ? AND c.task_name = ? AND c.position > ? ORDER BY c.position LIMIT ?`,
    ),
    floor: db.prepare('SELECT floor FROM docket_feed_floors WHERE namespace = ?'),
    head: db.prepare(
      'SELECT max(position) AS head FROM docket_changes INDEXED BY docket_changes_namespace WHERE namespace = ?',
    ),
    oldest: db.prepare(
      `SELECT c.position, h.at FROM docket_changes c INDEXED BY docket_changes_namespace
       LEFT JOIN docket_history h ON h.run_id = c.run_id AND h.seq = c.seq
       WHERE c.namespace = ? ORDER BY c.position LIMIT ?`,
    ),
    trim: db.prepare('DELETE FROM docket_changes WHERE namespace = ? AND position <= ?'),
    raiseFloor: db.prepare(
      `INSERT INTO docket_feed_floors (namespace, floor) VALUES (?, ?)
       ON CONFLICT (namespace) DO UPDATE SET floor = max(floor, excluded.floor)`,
    ),
  };
}

/**
 * `Store.readChanges`: one index range, then the floor. Each is its own snapshot, the floor read last: a trim that
 * lands between them makes the read say `CURSOR_EXPIRED` rather than hide what it removed.
 */
export function readChanges(ctx: SqliteContext, request: ChangesRequest): Promise<ChangesAnswer> {
  return ctx.read('operator.changes', ({ s }) => {
    const floorOf = () => s.changes.floor.get(request.namespace)?.floor ?? 0;
    const after = request.after ?? floorOf();
    const rows =
      request.taskName === null
        ? s.changes.page.all(request.namespace, after, request.limit)
        : s.changes.taskPage.all(request.namespace, request.taskName, after, request.limit);
    return { changes: rows.map(changeOf), floor: floorOf() };
  });
}

/** `Store.changesHead`: the namespace's last position (the end of its index), else its floor. */
export function changesHead(ctx: SqliteContext, namespace: string): Promise<number> {
  return ctx.read(
    'queue.watch',
    ({ s }) => s.changes.head.get(namespace)?.head ?? s.changes.floor.get(namespace)?.floor ?? 0,
  );
}

/** `Store.trimChanges`: the namespace's oldest entries before `before` (and those whose run is gone), in one write. */
export function trimChanges(ctx: SqliteContext, request: TrimChangesRequest): Promise<number> {
  const before = new Date(request.before).toISOString();
  return ctx.write('operator.maintenance.collect', ({ s }) => {
    const oldest = s.changes.oldest.all(request.namespace, request.limit);
    const { count, key } = prefixBefore(oldest, before, (row) => row.position);
    if (count === 0) return 0;
    s.changes.trim.run(request.namespace, key);
    s.changes.raiseFloor.run(request.namespace, key);
    return count;
  });
}

function changeOf(row: ChangeRow): StoredChange {
  return {
    position: row.position,
    runId: row.run_id,
    taskName: row.task_name,
    taskVersion: row.task_version,
    entry: rowToHistory(row),
  };
}
