import type {
  DueSchedulesRequest,
  ListSchedulesRequest,
  SchedulePlan,
  ScheduleRecord,
  ScheduleRow,
  StoredReceipt,
} from '@docket/core/store';
import { rowToSchedule, SCHEDULE_COLUMNS, scheduleParams } from '@docket/core/store';
import type Database from 'better-sqlite3';
import { BOUND_LIMIT } from '../bound-limit.js';
import type { OpenConnection, SqliteContext } from '../context.js';
import { countMove } from '../writes/run-counts.js';

/** The schedule statements of one connection, prepared on first use. */
const prepared = new WeakMap<Database.Database, Map<string, Database.Statement>>();

function statement(db: Database.Database, text: string): Database.Statement {
  let byText = prepared.get(db);
  if (byText === undefined) {
    byText = new Map();
    prepared.set(db, byText);
  }
  let stmt = byText.get(text);
  if (stmt === undefined) {
    stmt = db.prepare(text);
    byText.set(text, stmt);
  }
  return stmt;
}

const SELECT = 'SELECT * FROM docket_schedules WHERE namespace = ? AND schedule_id = ?';
const UPSERT = `INSERT OR REPLACE INTO docket_schedules (${SCHEDULE_COLUMNS.join(', ')})
  VALUES (${SCHEDULE_COLUMNS.map((c) => `@${c}`).join(', ')})`;
const DELETE = 'DELETE FROM docket_schedules WHERE namespace = ? AND schedule_id = ?';
const DUE = `SELECT * FROM docket_schedules INDEXED BY docket_schedules_due
  WHERE namespace = ? AND task_name = ? AND task_version = ? AND enabled = 1 AND next_at IS NOT NULL AND next_at <= ?
  ORDER BY next_at ${BOUND_LIMIT}`;
const LIST = 'SELECT * FROM docket_schedules WHERE namespace = ? AND schedule_id > ? ORDER BY schedule_id LIMIT ?';

/**
 * `Store.transactSchedule`: core's plan with the schedule row and the command's receipt, then the plan's writes
 * (the schedule, its slots' runs whose keys are free, the receipt) in the batch's transaction.
 */
export function transactSchedule<T>(
  ctx: SqliteContext,
  namespace: string,
  id: string,
  plan: SchedulePlan<T>,
  commandId?: string,
): Promise<T> {
  let planError: unknown;
  return ctx.write(
    'store.transactSchedule',
    (open) => {
      const row = statement(open.db, SELECT).get(namespace, id) as ScheduleRow | undefined;
      const receipt = commandId === undefined ? null : storedReceipt(open, namespace, commandId);
      let decided: ReturnType<SchedulePlan<T>>;
      try {
        decided = plan(row === undefined ? null : rowToSchedule(row), receipt);
      } catch (error) {
        planError = error;
        throw error;
      }
      if (decided.schedule === 'delete') statement(open.db, DELETE).run(namespace, id);
      else if (decided.schedule !== null) statement(open.db, UPSERT).run(scheduleParams(decided.schedule));
      for (const { run, history } of decided.runs) {
        if (run.idempotencyKey !== null && open.s.selectRunByKey.get(run.namespace, run.taskName, run.idempotencyKey)) {
          continue;
        }
        open.s.insertRun(run);
        countMove(open.s, run.namespace, run.taskName, run.taskVersion, null, run.status);
        open.s.insertHistory(run, history);
      }
      if (decided.receipt !== null) {
        const { commandId: receiptId, requestHash, result } = decided.receipt;
        open.s.insertCommand.run(namespace, receiptId, requestHash, JSON.stringify(result), Date.now());
      }
      return decided.value;
    },
    undefined,
    () => planError,
  );
}

function storedReceipt(open: OpenConnection, namespace: string, commandId: string): StoredReceipt | null {
  const found = open.s.selectCommand.get(namespace, commandId);
  return found === undefined ? null : { requestHash: found.request_hash, result: JSON.parse(found.result) };
}

/** `Store.dueSchedules`: each task's due schedules by the partial index of enabled ones, earliest first. */
export function dueSchedules(ctx: SqliteContext, request: DueSchedulesRequest): Promise<ScheduleRecord[]> {
  return ctx.read('store.dueSchedules', (open) => {
    const rows: ScheduleRow[] = [];
    for (const task of request.tasks) {
      const due = statement(open.db, DUE);
      rows.push(...(due.all(request.namespace, task.name, task.version, request.now, request.limit) as ScheduleRow[]));
    }
    rows.sort((a, b) => Number(a.next_at) - Number(b.next_at));
    return rows.slice(0, request.limit).map(rowToSchedule);
  });
}

/** `Store.listSchedules`: in id order, after `after`. */
export function listSchedules(ctx: SqliteContext, request: ListSchedulesRequest): Promise<ScheduleRecord[]> {
  return ctx.read('store.listSchedules', (open) =>
    (statement(open.db, LIST).all(request.namespace, request.after ?? '', request.limit) as ScheduleRow[]).map(
      rowToSchedule,
    ),
  );
}
