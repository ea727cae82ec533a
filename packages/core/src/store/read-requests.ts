// The requests and answers of the store's read verbs: stats, lists, and collection.
import type { RunInfoFields } from '../machine/run-info.js';
import type { CallbackEventStatus, RunRecord, RunStatus } from '../machine/run-types.js';

/**
 * The first string above every string that starts with `prefix` (its last character raised by one): the upper bound
 * of a key-prefix range, `key >= prefix AND key < keyPrefixEnd(prefix)`, in binary collation.
 */
export function keyPrefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** What `Store.runStats` counts: one namespace, one task name or all of them. */
export interface RunStatsRequest {
  namespace: string;
  taskName: string | null;
  now: number;
}

/** `Store.runStats`'s answer: run counts (only non-zero ones), dead letters and the earliest due time. */
export interface RunStatsAnswer {
  counts: { taskName: string; taskVersion: string; status: RunStatus; count: number }[];
  deadLetters: number;
  /** The earliest `dueAt` (epoch ms) of a run claimable at `now`, or `null` when none is due. */
  oldestDueAt: number | null;
}

/** What `Store.settledPerMinute` reads: one namespace, from the minute holding `since` (epoch ms). */
export interface SettledRequest {
  namespace: string;
  since: number;
}

/** One minute of `Store.settledPerMinute`: its start (epoch ms, a multiple of 60,000) and the runs settled in it. */
export interface SettledMinute {
  minute: number;
  count: number;
}

/** What `listSchedules` selects. */
export interface ListSchedulesRequest {
  namespace: string;
  after: string | null;
  limit: number;
}

/** What `listCallbackEvents` selects. */
export interface ListCallbackEventsRequest {
  namespace: string;
  status: CallbackEventStatus;
  limit: number;
  /** Only events whose id sorts below this one (the previous slice's last); `null` from the newest. */
  before: string | null;
}

/** What `listRuns` selects. */
export interface ListRunsRequest {
  namespace: string;
  taskName: string | null;
  status: RunStatus | null;
  /** Only runs of this group (`''`: the default group), when given. */
  group?: string;
  /** Only the children of this run, when given. */
  parentRunId?: string;
  /** Only the run with this key (with `taskName`, which core always gives with it: one unique-index lookup). */
  idempotencyKey?: string;
  /** Only runs whose key starts with this (with `taskName`: a range of the same unique index), when given. */
  idempotencyKeyPrefix?: string;
  /** Only runs whose id sorts at or above this one (a creation-time prefix: runs created from then on). */
  from?: string;
  limit: number;
  /** Only runs whose id sorts below this one (the previous slice's last); `null` from the newest. */
  before: string | null;
  /** Whether to read each run's `query` and `state` too (`operator.runs.list({ payloads: true })`). */
  payloads?: boolean;
}

/**
 * What `listRuns` answers for each run: the fields a listing shows (`RunListItem`), with `query` and `state` when the
 * request asked for payloads. A store may answer whole `RunRecord`s; reading only these keeps a page of runs from
 * reading and parsing each row's policy, callback kinds and lease.
 */
export type ListedRun = RunInfoFields & Partial<Pick<RunRecord, 'query' | 'state'>>;

/** What `listChildren` reads: the children one page of a parent started. */
export interface ListChildrenRequest {
  namespace: string;
  parentRunId: string;
  /** The parent's page whose commit created them. */
  page: number;
}

/**
 * What `listChildren` answers for each child: the fields `ctx.children` shows. A store may answer whole `RunRecord`s;
 * reading only these keeps a fan-in of a thousand children from reading a thousand whole rows.
 */
export type ChildRecord = Pick<
  RunRecord,
  'runId' | 'taskName' | 'taskVersion' | 'status' | 'reason' | 'state' | 'error'
>;

/** What `collect` deletes, by time (epoch ms). */
export interface CollectRequest {
  namespace: string;
  runsBefore: number;
  deadLettersBefore: number;
  /** Scan at most this many candidate runs per call, so one call stays short. */
  limit: number;
  /** Continue the scan after this run id (from the previous call's `next`). */
  after: string | null;
}

/** What one `collect` call deleted, and where the next call continues (`null`: the scan is complete). */
export interface CollectResult {
  runs: number;
  events: number;
  deadLetters: number;
  next: string | null;
}
