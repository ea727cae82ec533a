import type {
  CreateRunRequest,
  DueSchedulesRequest,
  ListSchedulesRequest,
  SchedulePlan,
  ScheduleRecord,
  ScheduleRow,
  ScheduleWrite,
  StoredReceipt,
} from '@docket/core/store';
import { rowToSchedule, SCHEDULE_COLUMNS, scheduleParams } from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PostgresTransaction } from '../connection.js';
import type { PgContext } from '../context.js';
import { insertRuns, rowsOf } from '../writes/run-writes.js';

/** Marks that the plan threw nothing. */
const NO_ERROR = Symbol('no error');

/**
 * `Store.transactSchedule`: in one transaction, the schedule row locked (an advisory lock stands in for a row not
 * created yet) and the command's receipt, core's plan, then its writes: the schedule, the slots' runs whose keys are
 * free (one insert statement), the receipt.
 */
export function transactSchedule<T>(
  ctx: PgContext,
  namespace: string,
  id: string,
  plan: SchedulePlan<T>,
  commandId?: string,
): Promise<T> {
  let planError: unknown = NO_ERROR;
  return ctx.inTransaction(
    'store.transactSchedule',
    async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${namespace}:schedule:${id}`}, 0))`);
      const [row] = await rowsOf<ScheduleRow>(
        tx,
        sql`SELECT * FROM ${ctx.q.schedules} WHERE namespace = ${namespace} AND schedule_id = ${id} FOR UPDATE`,
      );
      const receipt = commandId === undefined ? null : await storedReceipt(ctx, tx, namespace, commandId);
      let decided: ScheduleWrite<T>;
      try {
        decided = plan(row === undefined ? null : rowToSchedule(row), receipt);
      } catch (error) {
        planError = error;
        throw error;
      }
      await applyScheduleWrite(ctx, tx, namespace, id, decided);
      return decided.value;
    },
    {},
    () => planError,
  );
}

async function storedReceipt(
  ctx: PgContext,
  tx: PostgresTransaction,
  namespace: string,
  commandId: string,
): Promise<StoredReceipt | null> {
  const [found] = await rowsOf<{ request_hash: string; result: string }>(
    tx,
    sql`SELECT request_hash, result FROM ${ctx.q.commands} WHERE namespace = ${namespace} AND command_id = ${commandId}`,
  );
  return found === undefined ? null : { requestHash: found.request_hash, result: JSON.parse(found.result) };
}

async function applyScheduleWrite<T>(
  ctx: PgContext,
  tx: PostgresTransaction,
  namespace: string,
  id: string,
  decided: ScheduleWrite<T>,
): Promise<void> {
  if (decided.schedule === 'delete') {
    await tx.execute(sql`DELETE FROM ${ctx.q.schedules} WHERE namespace = ${namespace} AND schedule_id = ${id}`);
  } else if (decided.schedule !== null) {
    const row = scheduleParams(decided.schedule);
    const values = SCHEDULE_COLUMNS.map((column) => sql`${row[column]}`);
    const updates = SCHEDULE_COLUMNS.map((column) => sql.raw(`${column} = EXCLUDED.${column}`));
    await tx.execute(
      sql`INSERT INTO ${ctx.q.schedules} (${sql.raw(SCHEDULE_COLUMNS.join(', '))}) VALUES (${sql.join(values, sql`, `)})
          ON CONFLICT (namespace, schedule_id) DO UPDATE SET ${sql.join(updates, sql`, `)}`,
    );
  }
  if (decided.runs.length > 0) {
    // A slot's run whose key is taken (fired before) is skipped by the insert's ON CONFLICT.
    const requests: CreateRunRequest[] = decided.runs.map((r) => ({ ...r, maxRuns: null }));
    await insertRuns(tx, ctx.tables, requests);
  }
  if (decided.receipt !== null) {
    const { commandId, requestHash, result } = decided.receipt;
    await tx.execute(
      sql`INSERT INTO ${ctx.q.commands} (namespace, command_id, request_hash, result, created_at)
          VALUES (${namespace}, ${commandId}, ${requestHash}, ${JSON.stringify(result)}, ${Date.now()})`,
    );
  }
}

/** `Store.dueSchedules`: each task's due schedules by the partial index of enabled ones, earliest first. */
export async function dueSchedules(ctx: PgContext, request: DueSchedulesRequest): Promise<ScheduleRecord[]> {
  const rows: ScheduleRow[] = [];
  for (const task of request.tasks) {
    rows.push(
      ...(await rowsOf<ScheduleRow>(
        ctx.live(),
        sql`SELECT * FROM ${ctx.q.schedules} WHERE namespace = ${request.namespace} AND task_name = ${task.name}
          AND task_version = ${task.version} AND enabled = 1 AND next_at IS NOT NULL AND next_at <= ${request.now}
          ORDER BY next_at LIMIT ${request.limit}`,
      )),
    );
  }
  rows.sort((a, b) => Number(a.next_at) - Number(b.next_at));
  return rows.slice(0, request.limit).map(rowToSchedule);
}

/** `Store.listSchedules`: in id order, after `after`. */
export async function listSchedules(ctx: PgContext, request: ListSchedulesRequest): Promise<ScheduleRecord[]> {
  const rows = await rowsOf<ScheduleRow>(
    ctx.live(),
    sql`SELECT * FROM ${ctx.q.schedules} WHERE namespace = ${request.namespace} AND schedule_id > ${request.after ?? ''}
      ORDER BY schedule_id LIMIT ${request.limit}`,
  );
  return rows.map(rowToSchedule);
}
