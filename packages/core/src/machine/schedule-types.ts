import type { Json } from '../util/json.js';

/** What a schedule does with slots no consumer fired on time. */
export type Misfire = 'latest' | 'skip' | 'all';

/** A persisted schedule, as stores keep it; times are epoch milliseconds. */
export interface ScheduleRecord {
  namespace: string;
  /** The schedule's id, unique in its namespace. */
  id: string;
  taskName: string;
  taskVersion: string;
  cron: string;
  timezone: string;
  query: Json;
  /** The limits each slot's run is started with. */
  limits: { modelCalls?: number };
  misfire: Misfire;
  enabled: boolean;
  /** The next slot to fire, `null` when the expression has none left. */
  nextAt: number | null;
  /** The latest slot fired or passed over. */
  lastSlotAt: number | null;
  /** Rises with every change by the application or an operator (not with firing). */
  revision: number;
  createdAt: number;
  updatedAt: number;
}

/** The public view of a schedule, as `operator.schedules.list` answers it. */
export interface ScheduleInfo {
  id: string;
  task: { name: string; version: string };
  cron: string;
  timezone: string;
  query: Json;
  misfire: Misfire;
  enabled: boolean;
  nextAt: string | null;
  lastSlotAt: string | null;
  revision: number;
}

/** Builds the public view of a stored schedule. */
export function toScheduleInfo(s: ScheduleRecord): ScheduleInfo {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: s.id,
    task: { name: s.taskName, version: s.taskVersion },
    cron: s.cron,
    timezone: s.timezone,
    query: s.query,
    misfire: s.misfire,
    enabled: s.enabled,
    nextAt: iso(s.nextAt),
    lastSlotAt: iso(s.lastSlotAt),
    revision: s.revision,
  };
}
