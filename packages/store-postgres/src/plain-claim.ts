import {
  isPlainClaimOf,
  type PlainClaim,
  type RunRecord,
  type RunRow,
  type RunWrite,
  rowToRun,
  type SelectRequest,
} from '@docket/core';
import { columnList } from './recordsets.js';
import type { Tables } from './run-writes.js';
import { docketRuns } from './schema.js';
import type { Statement } from './statement.js';

/**
 * The run columns the prepared claim statements read, by name: a prepared statement that read `*` would fail once a
 * migration changed the table's column order ("cached plan must not change result type") in processes still running.
 */
export const RUN_COLUMNS = columnList(docketRuns);

/** Whether a claim's write is a plain claim: the run goes `running` and no callback event is written. */
export function isPlainClaim(write: RunWrite): boolean {
  return write.run.status === 'running' && write.events.length === 0;
}

/**
 * A row the plain-claim statement selected, as it was before the statement, whether the statement claimed it, and how
 * many rows the statement claimed in all.
 */
export type PlainClaimRow = RunRow & { docket_plain: boolean; docket_claimed: number };

/** The statement text for each set of tables and number of tasks: it depends on nothing else, so it is built once. */
const texts = new Map<string, string>();

/**
 * The plain claim as one statement, for requests that describe it (`SelectRequest.plainClaim`): it
 * selects and locks the due runs of the request's tasks (`SKIP LOCKED`, earliest `claim_due_at` first, at most
 * `limit`), writes core's plain claim to those that qualify for it (the same condition as `qualifiesForPlainClaim`)
 * with their history entries, and answers every selected row as it was before the statement, marked
 * `docket_plain` where it was claimed (`docket_claimed` counts the rows written, which must be as many). The rows it
 * selected but did not claim (a deadline passed, a time trigger fired) are left for core's plans on the ordinary path.
 */
export function plainClaimStatement(tables: Tables, request: SelectRequest, claim: PlainClaim): Statement {
  const tasks = request.tasks.length;
  const key = `${tables.runs}\n${tasks}`;
  let text = texts.get(key);
  if (text === undefined) {
    // $1 namespace, $2 now, $3 limit, $4 actor, $5 lease expiry, $6 history time, then name and version per task.
    const perTask = request.tasks.map(
      (
        _,
        i,
      ) => `SELECT ${RUN_COLUMNS} FROM ${tables.runs} WHERE namespace = $1::text AND task_name = $${7 + 2 * i}::text
          AND task_version = $${8 + 2 * i}::text AND claim_due_at IS NOT NULL AND claim_due_at <= $2::double precision
          ORDER BY claim_due_at LIMIT $3::integer FOR UPDATE SKIP LOCKED`,
    );
    // One task's rows come straight from its index scan; several tasks' (one locking CTE each, since a locking
    // select cannot be a branch of a UNION) are merged, earliest due first.
    const selected =
      tasks === 1
        ? `c AS (${perTask[0]})`
        : `${perTask.map((s, i) => `c${i} AS (${s})`).join(', ')},
      c AS (SELECT * FROM (${perTask.map((_, i) => `SELECT * FROM c${i}`).join(' UNION ALL ')}) AS t
          ORDER BY claim_due_at LIMIT $3::integer)`;
    // Whether the plain claim applies to a selected row: the condition of `qualifiesForPlainClaim`.
    const plain = `(c.status = 'pending' OR (c.status = 'retrying' AND (c.due_at IS NULL OR c.due_at <= $2::double precision)))
          AND (c.deadline_at IS NULL OR c.deadline_at > $2::double precision)`;
    // No join between the CTEs: with a generic plan the server expects one row in each and would compare every pair.
    // The update answers what the history rows need; the answer marks the claimed rows by the same condition, and
    // counts the update's rows so that the caller can check the two agree.
    text = `WITH ${selected},
      u AS (UPDATE ${tables.runs} AS r SET status = 'running', reason = 'CLAIMED', revision = c.revision + 1,
          due_at = NULL, claim_due_at = NULL, fence = c.fence + 1, lease_owner = $4::text, lease_token = c.fence + 1,
          lease_expires_at = $5::double precision, updated_at = $2::double precision
        FROM c WHERE r.run_id = c.run_id AND ${plain}
        RETURNING r.run_id, c.revision + 1 AS seq, c.status AS from_status),
      h AS (INSERT INTO ${tables.history} (run_id, seq, at, from_status, to_status, reason, actor, detail)
        SELECT run_id, seq, $6::text, from_status, 'running', 'CLAIMED', $4::text, NULL FROM u)
      SELECT c.*, ${plain} AS docket_plain, (SELECT count(*)::integer FROM u) AS docket_claimed FROM c`;
    texts.set(key, text);
  }
  const params: unknown[] = [
    request.namespace,
    request.now,
    request.limit,
    claim.actor,
    claim.leaseExpiresAt,
    claim.at,
  ];
  for (const task of request.tasks) params.push(task.name, task.version);
  return { text, params };
}

/** What the plain-claim statement's rows come to: the runs claimed, and the rows left for the ordinary path. */
export interface PlainClaimResult {
  /** Core's write for each run the statement claimed, where it is exactly the plain claim. */
  claimed: RunWrite[];
  /** Rows selected but not claimed: they qualified for no plain claim, so core plans them the ordinary way. */
  leftover: number;
  /** Runs the statement claimed whose plan was not the plain claim (a bug): recovery takes them when the lease ends. */
  disagreed: RunRecord[];
}

/**
 * Hands every claimed row, as it was before the statement, to core's plan and keeps the runs whose plan is exactly
 * the write the statement made (`isPlainClaimOf`); the others are reported, never executed.
 */
export function planPlainClaims(request: SelectRequest, claim: PlainClaim, rows: PlainClaimRow[]): PlainClaimResult {
  const result: PlainClaimResult = { claimed: [], leftover: 0, disagreed: [] };
  const marked = rows.reduce((n, row) => n + (row.docket_plain ? 1 : 0), 0);
  if (rows.length > 0 && marked !== rows[0]?.docket_claimed) {
    throw new Error(`internal: the plain claim wrote ${rows[0]?.docket_claimed} runs but marked ${marked}`);
  }
  for (const row of rows) {
    if (!row.docket_plain) {
      result.leftover++;
      continue;
    }
    const current = rowToRun(row);
    const write = request.plan(current);
    if (write !== null && isPlainClaimOf(current, write, claim, request.now)) result.claimed.push(write);
    else result.disagreed.push(current);
  }
  return result;
}
