/**
 * The row of a fresh start, bound by few values: a run that no page, claim or retry has written yet holds the same
 * value in 19 of its 42 columns, so a SQL store may insert it with those as literals and bind only the other 23.
 */
import { claimDueAt } from '../machine/claimable.js';
import { DEFAULT_GROUP } from '../machine/flow.js';
import type { RunRecord } from '../machine/run-types.js';
import { json, type RunRow } from './run-row.js';
import { RUN_COLUMNS } from './run-row-values.js';
import type { VersionValues } from './task-versions.js';

/** The columns every fresh run holds alike (`isFreshRun`), as SQL literals. */
export const FRESH_RUN_LITERALS: Readonly<Partial<Record<keyof RunRow, string>>> = Object.freeze({
  state: 'NULL',
  page: '1',
  page_failures: '0',
  business_failures: '0',
  scheduled_retries: '0',
  recoveries: '0',
  error: 'NULL',
  revision: '1',
  model_calls_used: '0',
  trigger_event: 'NULL',
  fence: '0',
  lease_owner: 'NULL',
  lease_token: 'NULL',
  lease_expires_at: 'NULL',
  retries: '0',
  rate_limited: '0',
  parent_run_id: 'NULL',
  parent_page: 'NULL',
  children: 'NULL',
});

/** The other columns, in table order: what `freshRunValues` answers. */
export const FRESH_RUN_BOUND: readonly (keyof RunRow)[] = RUN_COLUMNS.filter(
  (column) => !(column in FRESH_RUN_LITERALS),
) as (keyof RunRow)[];

/** Whether a run's row holds `FRESH_RUN_LITERALS`: a start no page, claim, retry or family write has changed. */
export function isFreshRun(run: RunRecord): boolean {
  return (
    run.page === 1 &&
    run.revision === 1 &&
    run.fence === 0 &&
    run.pageFailures === 0 &&
    run.businessFailures === 0 &&
    run.scheduledRetries === 0 &&
    run.recoveries === 0 &&
    run.modelCallsUsed === 0 &&
    run.retries === 0 &&
    run.rateLimited === 0 &&
    run.state === null &&
    run.error === null &&
    run.triggerEvent === null &&
    run.lease === null &&
    run.parent === null &&
    run.children === null
  );
}

/**
 * A fresh run's values in `FRESH_RUN_BOUND` order, encoded as `runParams` encodes them, with the version's columns
 * as `version` gives them (narrowed or whole).
 */
export function freshRunValues(run: RunRecord, version: VersionValues): unknown[] {
  return [
    run.runId,
    run.namespace,
    run.taskName,
    run.taskVersion,
    version.definition_hash,
    run.status,
    run.reason,
    JSON.stringify(run.query),
    json(run.trigger),
    run.dueAt,
    claimDueAt(run),
    run.deadlineAt,
    run.modelCallLimit,
    run.idempotencyKey,
    run.inputHash,
    version.policy,
    version.events,
    version.recovery,
    run.createdAt,
    run.updatedAt,
    run.priority,
    run.traceParent,
    run.group ?? DEFAULT_GROUP,
  ];
}
