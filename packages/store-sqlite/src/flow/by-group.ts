/**
 * Which runs `docket_runs_group_claim` keeps. Only the claims of a task that may go group by group read it (core's
 * `mayClaimByGroup`: group limits, or a group hold ever set), so a run's row says whether it belongs there
 * (`by_group`), and the runs of every other task cost one claim index less at each start, claim and retry.
 *
 * The flag is decided when the run is inserted, from the task's record in the same transaction
 * (`BY_GROUP_AT_INSERT`). When a task starts to go by group (a registration that adds group limits, the first group
 * hold), `markRunsByGroup` flags its runs that may be claimable again; SQLite's single writer orders that against
 * every insert, so no run of such a task is left out of the index.
 */
import { mayClaimByGroup, type TaskRecord } from '@docket/core/store';
import type Database from 'better-sqlite3';

/**
 * The `by_group` value of an inserted run, as SQL: `mayClaimByGroup` of its task's stored record, 0 without one. Two
 * parameters: the namespace and the task's name.
 */
export const BY_GROUP_AT_INSERT = `coalesce((SELECT group_hold_until IS NOT NULL
  OR json_extract(flow, '$.group.concurrency') IS NOT NULL OR json_extract(flow, '$.group.rate') IS NOT NULL
  FROM docket_tasks WHERE namespace = ? AND name = ?), 0)`;

/** The statement that flags a task's runs for the group claim index (see `markRunsByGroup`). */
export function markByGroupStatement(db: Database.Database): Database.Statement<[string, string]> {
  // A succeeded or cancelled run never becomes claimable again; a failed one may (an operator's retry).
  return db.prepare(
    `UPDATE docket_runs SET by_group = 1
     WHERE namespace = ? AND task_name = ? AND by_group = 0 AND status NOT IN ('success', 'cancelled')`,
  );
}

/**
 * Flags the task's runs for the group claim index when its record `next` may claim by group and `current` (the
 * record it replaces, `null` for none) did not. One scan of the runs table, once in a task's life for each time it
 * starts to go by group.
 */
export function markRunsByGroup(
  mark: Database.Statement<[string, string]>,
  current: Pick<TaskRecord, 'flow' | 'groupHoldUntil'> | null,
  next: Pick<TaskRecord, 'namespace' | 'name' | 'flow' | 'groupHoldUntil'>,
): void {
  if (!mayClaimByGroup(next) || (current !== null && mayClaimByGroup(current))) return;
  mark.run(next.namespace, next.name);
}
