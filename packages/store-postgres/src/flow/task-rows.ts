import { rowToTask, TASK_COLUMNS, type TaskRecord, type TaskRow, taskValues } from '@docket/core/store';
import type { Statement } from '../wire/statement.js';
import { type Executor, rowsOf, type Tables } from '../writes/run-writes.js';

/** The statement that reads the tasks' rows by name (`lock`: `FOR UPDATE`). */
export function taskRowsStatement(
  tables: Tables,
  namespace: string,
  names: readonly string[],
  lock = false,
): Statement {
  return {
    text: `SELECT * FROM ${tables.tasks} WHERE namespace = $1 AND name = ANY($2::text[])${lock ? ' FOR UPDATE' : ''}`,
    params: [namespace, names],
  };
}

/** The records of task rows read by `taskRowsStatement`, by name. */
export const taskRecordsOf = (rows: readonly TaskRow[]): Map<string, TaskRecord> =>
  new Map(rows.map((row) => [row.name, rowToTask(row)]));

/** The tasks' records by name (those that have one). */
export async function taskRecords(
  ex: Executor,
  tables: Tables,
  namespace: string,
  names: readonly string[],
  lock = false,
): Promise<Map<string, TaskRecord>> {
  return taskRecordsOf(await rowsOf<TaskRow>(ex, taskRowsStatement(tables, namespace, names, lock)));
}

/** Writes a task's whole record. */
export async function writeTask(ex: Executor, tables: Tables, task: TaskRecord): Promise<void> {
  const columns = TASK_COLUMNS.join(', ');
  const sets = TASK_COLUMNS.filter((c) => c !== 'namespace' && c !== 'name')
    .map((c) => `${c} = excluded.${c}`)
    .join(', ');
  const values = TASK_COLUMNS.map((_, i) => `$${i + 1}`).join(', ');
  await rowsOf(ex, {
    text: `INSERT INTO ${tables.tasks} (${columns}) VALUES (${values}) ON CONFLICT (namespace, name) DO UPDATE SET ${sets}`,
    params: taskValues(task),
  });
}
