/** The `docket_tasks` row both SQL stores use, and its codec. */
import type { TaskFlow } from '../machine/flow.js';
import type { TaskRecord } from './contract.js';

/** A `docket_tasks` row (JSON as text, times as epoch ms, `paused` as 0 or 1). */
export interface TaskRow {
  namespace: string;
  name: string;
  versions: string;
  flow: string | null;
  paused: number | boolean;
  revision: number;
  hold_until: number | string | null;
  group_hold_until: number | string | null;
  updated_at: number | string;
}

/** The columns of a task row, in table order. */
export const TASK_COLUMNS = [
  'namespace',
  'name',
  'versions',
  'flow',
  'paused',
  'revision',
  'hold_until',
  'group_hold_until',
  'updated_at',
] as const;

const time = (value: number | string | null) => (value === null ? null : Number(value));

/** Rebuilds a `TaskRecord` from its row. */
export function rowToTask(row: TaskRow): TaskRecord {
  return {
    namespace: row.namespace,
    name: row.name,
    versions: JSON.parse(row.versions) as string[],
    flow: row.flow === null ? null : (JSON.parse(row.flow) as TaskFlow),
    paused: row.paused === true || row.paused === 1,
    revision: Number(row.revision),
    holdUntil: time(row.hold_until),
    groupHoldUntil: time(row.group_hold_until),
    updatedAt: Number(row.updated_at),
  };
}

/** A task's row values in `TASK_COLUMNS` order (`paused` as 0 or 1). */
export function taskValues(task: TaskRecord): unknown[] {
  return [
    task.namespace,
    task.name,
    JSON.stringify(task.versions),
    task.flow === null ? null : JSON.stringify(task.flow),
    task.paused ? 1 : 0,
    task.revision,
    task.holdUntil,
    task.groupHoldUntil,
    task.updatedAt,
  ];
}
