import {
  isPlainClaimOf,
  type PlainClaim,
  type RunRecord,
  type RunRow,
  type RunWrite,
  rowToRun,
  type SelectRequest,
} from '@docket/core';
import { columnList, columnsOf } from './recordsets.js';
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

/**
 * The text columns that every run of a task usually holds word for word: its definition hash, policy, callback kinds
 * and recovery mode. The claim answers each as NULL where it equals the value sent with the statement (the last one
 * claimed for the request's first task), and `planPlainClaims` puts the value back: the client then reads and keeps
 * four short strings less per claimed row, and the rows' records share those strings.
 */
export interface SharedValues {
  definition_hash: string | null;
  policy: string | null;
  events: string | null;
  recovery: string | null;
}

const SHARED = ['definition_hash', 'policy', 'events', 'recovery'] as const;
const NOTHING_SHARED: SharedValues = Object.freeze({
  definition_hash: null,
  policy: null,
  events: null,
  recovery: null,
});

/** What one store last claimed for each task: the `SharedValues` its next claim sends. */
export class SharedColumns {
  private readonly byTask = new Map<string, SharedValues>();

  /** The values to send with a claim of `request` (nothing yet: every value comes back in full). */
  expected(request: SelectRequest): SharedValues {
    const first = request.tasks[0];
    return (first && this.byTask.get(taskKey(first.name, first.version))) ?? NOTHING_SHARED;
  }

  /** Remembers the values of a claimed row, as the next claim of its task will expect them. */
  learn(row: RunRow): void {
    const key = taskKey(row.task_name, row.task_version);
    const known = this.byTask.get(key);
    if (known && SHARED.every((column) => known[column] === row[column])) return;
    if (this.byTask.size >= 1_000) this.byTask.clear();
    this.byTask.set(key, {
      definition_hash: row.definition_hash,
      policy: row.policy,
      events: row.events,
      recovery: row.recovery,
    });
  }
}

const taskKey = (name: string, version: string) => `${name}\u0000${version}`;

/** The statement text for each set of tables and number of tasks: it depends on nothing else, so it is built once. */
const texts = new Map<string, string>();

/**
 * The plain claim as one statement, for requests that describe it (`SelectRequest.plainClaim`): it
 * selects and locks the due runs of the request's tasks (`SKIP LOCKED`, earliest `claim_due_at` first, at most
 * `limit`), writes core's plain claim to those that qualify for it (the same condition as `qualifiesForPlainClaim`)
 * with their history entries, and answers every selected row as it was before the statement, marked
 * `docket_plain` where it was claimed (`docket_claimed` counts the rows written, which must be as many). The rows it
 * selected but did not claim (a deadline passed, a time trigger fired) are left for core's plans on the ordinary path.
 * With `hold` it writes nothing: it selects and locks the same rows and answers them marked the same way, and the
 * caller writes the claims later in the same transaction (see `held-claims.ts`).
 */
export function plainClaimStatement(
  tables: Tables,
  request: SelectRequest,
  claim: PlainClaim,
  shared: SharedValues = NOTHING_SHARED,
  hold = false,
): Statement {
  const tasks = request.tasks.length;
  const key = `${tables.runs}\n${tasks}\n${hold}`;
  // $1 namespace, $2 now, $3 limit, then (unless held) $4 actor, $5 lease expiry, $6 history time, then name and
  // version per task, then the shared values (`SharedValues`, in `SHARED` order).
  const firstTask = hold ? 4 : 7;
  let text = texts.get(key);
  if (text === undefined) {
    const perTask = request.tasks.map(
      (
        _,
        i,
      ) => `SELECT ${RUN_COLUMNS} FROM ${tables.runs} WHERE namespace = $1::text AND task_name = $${firstTask + 2 * i}::text
          AND task_version = $${firstTask + 1 + 2 * i}::text AND claim_due_at IS NOT NULL AND claim_due_at <= $2::double precision
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
    const answer = answerColumns(tasks, firstTask + 2 * tasks);
    // No join between the CTEs: with a generic plan the server expects one row in each and would compare every pair.
    // The update answers what the history rows need; the answer marks the claimed rows by the same condition, and
    // counts the update's rows so that the caller can check the two agree.
    text = hold
      ? `WITH ${selected}
      SELECT ${answer}, ${plain} AS docket_plain, (SELECT count(*)::integer FROM c WHERE ${plain}) AS docket_claimed FROM c`
      : `WITH ${selected},
      u AS (UPDATE ${tables.runs} AS r SET status = 'running', reason = 'CLAIMED', revision = c.revision + 1,
          due_at = NULL, claim_due_at = NULL, fence = c.fence + 1, lease_owner = $4::text, lease_token = c.fence + 1,
          lease_expires_at = $5::double precision, updated_at = $2::double precision
        FROM c WHERE r.run_id = c.run_id AND ${plain}
        RETURNING r.run_id, c.revision + 1 AS seq, c.status AS from_status),
      h AS (INSERT INTO ${tables.history} (run_id, seq, at, from_status, to_status, reason, actor, detail)
        SELECT run_id, seq, $6::text, from_status, 'running', 'CLAIMED', $4::text, NULL FROM u)
      SELECT ${answer}, ${plain} AS docket_plain,
        (SELECT count(*)::integer FROM u) AS docket_claimed FROM c`;
    texts.set(key, text);
  }
  const params: unknown[] = [request.namespace, request.now, request.limit];
  if (!hold) params.push(claim.actor, claim.leaseExpiresAt, claim.at);
  for (const task of request.tasks) params.push(task.name, task.version);
  for (const column of SHARED) params.push(shared[column]);
  return { text, params };
}

/**
 * NOT NULL columns the claim answers as NULL where they hold the value of a run that was never claimed (a fresh
 * start's): a NULL costs the client nothing to read, a value a string and its parse. `updated_at` is compared with
 * `created_at` instead.
 */
const FRESH = {
  page: 1,
  page_failures: 0,
  business_failures: 0,
  scheduled_retries: 0,
  recoveries: 0,
  model_calls_used: 0,
  revision: 1,
  fence: 0,
  status: 'pending',
  reason: 'STARTED',
} as const;
const FRESH_COLUMNS = Object.keys(FRESH) as (keyof typeof FRESH)[];

/**
 * The claim's answer columns: the namespace as NULL (the request's own), the task's name and version as NULL when the
 * request has one task, the `SHARED` columns as NULL where they equal the values sent from `$first` on, and the
 * `FRESH` columns (and `updated_at`) as NULL where they hold a fresh run's value, and `claim_due_at` as NULL always.
 */
function answerColumns(tasks: number, first: number): string {
  return columnsOf(docketRuns)
    .map(({ name }) => {
      if (name === 'namespace' || (tasks === 1 && (name === 'task_name' || name === 'task_version'))) {
        return `NULL::text AS "${name}"`;
      }
      if (name === 'updated_at') return `NULLIF(c."updated_at", c."created_at") AS "updated_at"`;
      // Derived from the record when written (`claimDueAt`), never read into one.
      if (name === 'claim_due_at') return 'NULL::double precision AS "claim_due_at"';
      if (name in FRESH) {
        const value = FRESH[name as keyof typeof FRESH];
        return `NULLIF(c."${name}", ${typeof value === 'number' ? value : `'${value}'`}) AS "${name}"`;
      }
      const shared = SHARED.indexOf(name as (typeof SHARED)[number]);
      return shared < 0 ? `c."${name}"` : `NULLIF(c."${name}", $${first + shared}::text) AS "${name}"`;
    })
    .join(', ');
}

/** Puts back into a claimed row what the claim answered as NULL (see `answerColumns`), from the values it sent. */
function restoreRow(row: PlainClaimRow, request: SelectRequest, shared: SharedValues): void {
  row.namespace ??= request.namespace;
  const only = request.tasks.length === 1 ? request.tasks[0] : undefined;
  if (only !== undefined) {
    row.task_name ??= only.name;
    row.task_version ??= only.version;
  }
  for (const column of SHARED) {
    if (row[column] === null) row[column] = shared[column] as string;
  }
  for (const column of FRESH_COLUMNS) {
    if (row[column] === null) (row as unknown as Record<string, unknown>)[column] = FRESH[column];
  }
  row.updated_at ??= row.created_at;
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

/**
 * Hands every claimed row, as it was before the statement, to core's plan and keeps the runs whose plan is exactly
 * the write the statement made (`isPlainClaimOf`); the others are reported, never executed.
 */
export function planPlainClaims(
  request: SelectRequest,
  claim: PlainClaim,
  rows: PlainClaimRow[],
  shared: SharedValues = NOTHING_SHARED,
  learned?: SharedColumns,
): PlainClaimResult {
  const result: PlainClaimResult = { claimed: [], before: [], leftover: 0, disagreed: [] };
  const marked = rows.reduce((n, row) => n + (row.docket_plain ? 1 : 0), 0);
  if (rows.length > 0 && marked !== rows[0]?.docket_claimed) {
    throw new Error(`internal: the plain claim wrote ${rows[0]?.docket_claimed} runs but marked ${marked}`);
  }
  for (const row of rows) {
    if (!row.docket_plain) {
      result.leftover++;
      continue;
    }
    restoreRow(row, request, shared);
    learned?.learn(row);
    const current = rowToRun(row);
    const write = request.plan(current);
    if (write !== null && isPlainClaimOf(current, write, claim, request.now)) {
      result.claimed.push(write);
      result.before.push(current);
    } else result.disagreed.push(current);
  }
  return result;
}
