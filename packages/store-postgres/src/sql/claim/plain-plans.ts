/**
 * What the plain claim's answer rows come to: each claimed run's record (its version's columns filled in) and core's
 * plan for it.
 */
import {
  isPlainClaimOf,
  newRun,
  type PlainClaim,
  parseSharedJson,
  type RunRecord,
  type RunRow,
  type RunWrite,
  type SelectRequest,
} from '@docket/core/store';
import type { PgTaskVersions, Query, VersionedRow } from '../../task-versions.js';
import type { Tables } from '../../writes/run-writes.js';
import { type PlainClaimRow, SHARED, type SharedColumns, type SharedValues } from './plain-statement.js';

/**
 * The record of a fresh run's answer row (see `answerColumns`), put together from its answered columns and the shared
 * values sent (widened: the version's values where the row leaves them to it): what `rowToRun` answers for its
 * stored row, in the same field order, without a row in between.
 */
function freshRun(row: PlainClaimRow, request: SelectRequest, shared: SharedValues): RunRecord {
  const only = request.tasks[0];
  return newRun({
    runId: row.run_id,
    namespace: request.namespace,
    taskName: row.task_name ?? (only?.name as string),
    taskVersion: row.task_version ?? (only?.version as string),
    definitionHash: shared.definition_hash as string,
    query: JSON.parse(row.query),
    inputHash: row.input_hash,
    idempotencyKey: row.idempotency_key,
    trigger: null,
    dueAt: row.created_at,
    deadlineAt: row.deadline_at,
    modelCallLimit: row.model_call_limit,
    policy: parseSharedJson(shared.policy as string),
    events: parseSharedJson(shared.events as string),
    recovery: shared.recovery as RunRecord['recovery'],
    createdAt: row.created_at,
    priority: row.priority,
    traceParent: row.trace_parent,
    group: row.group_key === '' ? null : row.group_key,
  });
}

/** What the plain-claim statement's rows come to: the runs claimed, and the rows left for the ordinary path. */
export interface PlainClaimResult {
  /** Core's write for each run the statement claimed, where it is exactly the plain claim. */
  claimed: RunWrite[];
  /** The row of each claimed run as it was before the claim, in the order of `claimed`. */
  before: RunRecord[];
  /** Rows selected but not claimed: they qualified for no plain claim, so core plans them the ordinary way. */
  leftover: number;
  /** Runs the statement claimed whose plan was not the plain claim (a bug): recovery takes them when the lease ends. */
  disagreed: RunRecord[];
}

/** Where `planPlainClaims` finds the versions of the rows (loaded by `query`), and the shared values it learns. */
export interface ClaimDecoding {
  versions: PgTaskVersions;
  query: Query;
  learned?: SharedColumns;
}

/** The `ClaimDecoding` of a store's claim whose loads run on `query`. */
export function decodingOn(ctx: { tables: Tables; sharedColumns: SharedColumns }, query: Query): ClaimDecoding {
  return { versions: ctx.tables.versions, query, learned: ctx.sharedColumns };
}

/**
 * Hands every claimed row, as it was before the statement, to core's plan and keeps the runs whose plan is exactly
 * the write the statement made (`isPlainClaimOf`); the others are reported, never executed. The versions the rows
 * leave columns to are loaded first.
 */
export async function planPlainClaims(
  request: SelectRequest,
  claim: PlainClaim,
  rows: PlainClaimRow[],
  shared: SharedValues,
  decoding: ClaimDecoding,
): Promise<PlainClaimResult> {
  const result: PlainClaimResult = { claimed: [], before: [], leftover: 0, disagreed: [] };
  const marked = rows.reduce((n, row) => n + (row.docket_plain ? 1 : 0), 0);
  if (rows.length > 0 && marked !== rows[0]?.docket_claimed) {
    throw new Error(`internal: the plain claim wrote ${rows[0]?.docket_claimed} runs but marked ${marked}`);
  }
  const stored = rows.map((row) => (row.docket_plain && row.docket_row !== null ? parseRow(row.docket_row) : null));
  const sharedOf = await sharedByTask(request, stored, shared, decoding);
  const { versions, learned } = decoding;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as PlainClaimRow;
    if (!row.docket_plain) {
      result.leftover++;
      continue;
    }
    let current: RunRecord;
    const whole = stored[i];
    if (whole === null || whole === undefined) {
      current = freshRun(row, request, sharedOf(row));
      // A fresh row holds the values sent, which are its task's as learned, unless it is of another of the tasks.
      if (row.task_name !== undefined)
        learned?.learn({ ...shared, task_name: row.task_name, task_version: row.task_version as string });
    } else {
      learned?.learn(whole);
      current = versions.runOf(whole);
    }
    const write = request.plan(current);
    if (write !== null && isPlainClaimOf(current, write, claim, request.now)) {
      result.claimed.push(write);
      result.before.push(current);
    } else result.disagreed.push(current);
  }
  return result;
}

const parseRow = (text: string) => JSON.parse(text) as RunRow;

/**
 * Loads the versions the whole rows `stored` leave columns to, and the request's versions when the shared values sent
 * leave any; answers each fresh row's shared values widened by its task version, once per version.
 */
async function sharedByTask(
  request: SelectRequest,
  stored: readonly (RunRow | null)[],
  shared: SharedValues,
  { versions, query }: ClaimDecoding,
): Promise<(row: PlainClaimRow) => SharedValues> {
  const first = request.tasks[0];
  const narrow = SHARED.some((column) => shared[column] === '');
  const keyed = (name: string, version: string): VersionedRow => ({
    ...(shared as VersionedRow),
    namespace: request.namespace,
    task_name: name,
    task_version: version,
  });
  // A fresh row is of one of the request's tasks.
  const needed = narrow ? request.tasks.map((task) => keyed(task.name, task.version)) : [];
  for (const whole of stored) if (whole !== null) needed.push(whole);
  await versions.load(query, needed);
  if (!narrow) return () => shared;
  const widened = new Map<string, SharedValues>();
  return (row) => {
    const name = row.task_name ?? (first?.name as string);
    const version = row.task_version ?? (first?.version as string);
    const key = `${name}\u0000${version}`;
    let values = widened.get(key);
    if (values === undefined) {
      values = versions.widen(keyed(name, version));
      widened.set(key, values);
    }
    return values;
  };
}
