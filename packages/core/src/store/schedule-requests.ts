// What the store's schedule verbs take: core's plan for one schedule, and the due schedules' selection.
import type { ScheduleRecord } from '../machine/schedule-types.js';
import type { Json } from '../util/json.js';
import type { CreateRunRequest, TaskKey } from './contract.js';

/** A stored operator command's receipt, as a schedule plan sees it. */
export interface StoredReceipt {
  requestHash: string;
  result: Json;
}

/** What a schedule plan decides: the schedule to store (or `'delete'`, or `null` to leave it), runs, a receipt. */
export interface ScheduleWrite<T> {
  schedule: ScheduleRecord | 'delete' | null;
  runs: readonly Pick<CreateRunRequest, 'run' | 'history'>[];
  receipt: { commandId: string; requestHash: string; result: Json } | null;
  value: T;
}

/** Core's decision about one schedule inside a store transaction. */
export type SchedulePlan<T> = (current: ScheduleRecord | null, receipt: StoredReceipt | null) => ScheduleWrite<T>;

/** What `dueSchedules` selects. */
export interface DueSchedulesRequest {
  namespace: string;
  tasks: readonly TaskKey[];
  now: number;
  limit: number;
}
