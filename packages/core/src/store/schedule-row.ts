/** The schedule row both SQL stores use (snake_case columns, JSON as text, times as epoch ms), and its codec. */
import type { Misfire, ScheduleRecord } from '../machine/schedule-types.js';

/** A `docket_schedules` row as the drivers return it. */
export interface ScheduleRow {
  namespace: string;
  schedule_id: string;
  task_name: string;
  task_version: string;
  cron: string;
  timezone: string;
  query: string;
  limits: string;
  misfire: string;
  enabled: number;
  next_at: number | null;
  last_slot_at: number | null;
  revision: number;
  created_at: number;
  updated_at: number;
}

/** The columns of a schedule row, in table order. */
export const SCHEDULE_COLUMNS = [
  'namespace',
  'schedule_id',
  'task_name',
  'task_version',
  'cron',
  'timezone',
  'query',
  'limits',
  'misfire',
  'enabled',
  'next_at',
  'last_slot_at',
  'revision',
  'created_at',
  'updated_at',
] as const;

/** Named parameters for inserting or replacing a schedule row. */
export function scheduleParams(s: ScheduleRecord): ScheduleRow {
  return {
    namespace: s.namespace,
    schedule_id: s.id,
    task_name: s.taskName,
    task_version: s.taskVersion,
    cron: s.cron,
    timezone: s.timezone,
    query: JSON.stringify(s.query),
    limits: JSON.stringify(s.limits),
    misfire: s.misfire,
    enabled: s.enabled ? 1 : 0,
    next_at: s.nextAt,
    last_slot_at: s.lastSlotAt,
    revision: s.revision,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

/** Rebuilds a `ScheduleRecord` from its row (numbers may come back as strings or bigints from some drivers). */
export function rowToSchedule(row: ScheduleRow): ScheduleRecord {
  const num = (value: unknown) => (value === null ? null : Number(value));
  return {
    namespace: row.namespace,
    id: row.schedule_id,
    taskName: row.task_name,
    taskVersion: row.task_version,
    cron: row.cron,
    timezone: row.timezone,
    query: JSON.parse(row.query),
    limits: JSON.parse(row.limits),
    misfire: row.misfire as Misfire,
    enabled: Number(row.enabled) === 1,
    nextAt: num(row.next_at),
    lastSlotAt: num(row.last_slot_at),
    revision: Number(row.revision),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
