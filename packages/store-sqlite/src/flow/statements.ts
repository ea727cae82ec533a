import { RUN_COLUMNS, TASK_COLUMNS, type TaskRow } from '@docket/core/store';
import type Database from 'better-sqlite3';
import { BOUND_LIMIT } from '../bound-limit.js';
import { markByGroupStatement } from './by-group.js';

/** Whose claims a `docket_flow_claims` row counts: the task's, or one group's. */
export type Scope = 'task' | 'group';
type ClaimsRow = { n: number; oldest: number | null };
type GroupScopeRow = { n: number; hold_until: number | null };

/**
 * The predicate of `docket_runs_group_claim` (`schema.ts`): a read of the index must state it, or SQLite cannot use
 * the partial index.
 */
const GROUP_CLAIMABLE = 'claim_due_at IS NOT NULL AND by_group = 1';

/** The statements `flowStatements` prepares. */
export interface FlowStatements {
  selectTask: Database.Statement<[string, string], TaskRow>;
  listTasks: Database.Statement<[string], TaskRow>;
  upsertTask: Database.Statement<unknown[]>;
  updatePaused: Database.Statement<[number, number, number, string, string, number]>;
  holdTask: Database.Statement<[number, string, string]>;
  holdGroups: Database.Statement<[number, string, string]>;
  countLeased: Database.Statement<[string, string], { n: number }>;
  groupScope: Database.Statement<[string, string, string, string, string, string], GroupScopeRow>;
  claimsSince: Database.Statement<[string, string, number], ClaimsRow>;
  groupClaimsSince: Database.Statement<[string, string, string, number], ClaimsRow>;
  claimableGroups: Database.Statement<
    [{ namespace: string; task: string }],
    { group_key: string; last_claimed_at: number | null; head_run_id: string | null }
  >;
  /** The due runs of `count` groups and `versions` versions, in claim order up to limits (see `groupsDueStatements`). */
  groupsDue: (count: number, versions: number) => Database.Statement<unknown[], unknown[]>;
  insertClaim: Database.Statement<[string, string, Scope, string, number, number]>;
  pruneClaims: Database.Statement<[string, string, Scope, number]>;
  touchGroup: Database.Statement<[string, string, string, number]>;
  holdGroup: Database.Statement<[string, string, string, number]>;
  /** Flags a task's runs for the group claim index (`by-group.ts`). */
  markByGroup: Database.Statement<[string, string]>;
}

/** Flow control's statements, prepared once per connection (tables and indexes in `schema.ts`). */
export function flowStatements(db: Database.Database): FlowStatements {
  const runColumns = RUN_COLUMNS.join(', ');
  return {
    selectTask: db.prepare('SELECT * FROM docket_tasks WHERE namespace = ? AND name = ?'),
    listTasks: db.prepare('SELECT * FROM docket_tasks WHERE namespace = ? ORDER BY name'),
    upsertTask: db.prepare(
      `INSERT OR REPLACE INTO docket_tasks (${TASK_COLUMNS.join(', ')}) VALUES (${TASK_COLUMNS.map(() => '?').join(', ')})`,
    ),
    updatePaused: db.prepare(
      'UPDATE docket_tasks SET paused = ?, revision = ?, updated_at = ? WHERE namespace = ? AND name = ? AND revision = ?',
    ),
    holdTask: db.prepare(
      'UPDATE docket_tasks SET hold_until = max(coalesce(hold_until, 0), ?) WHERE namespace = ? AND name = ?',
    ),
    holdGroups: db.prepare(
      'UPDATE docket_tasks SET group_hold_until = max(coalesce(group_hold_until, 0), ?) WHERE namespace = ? AND name = ?',
    ),
    countLeased: db.prepare(
      `SELECT count(*) AS n FROM docket_runs INDEXED BY docket_runs_lease
       WHERE namespace = ? AND task_name = ? AND lease_expires_at IS NOT NULL`,
    ),
    // A group's runs holding a lease, and its hold.
    groupScope: db.prepare(
      `SELECT (SELECT count(*) FROM docket_runs INDEXED BY docket_runs_lease
         WHERE namespace = ? AND task_name = ? AND group_key = ? AND lease_expires_at IS NOT NULL) AS n,
       (SELECT hold_until FROM docket_flow_groups WHERE namespace = ? AND task_name = ? AND group_key = ?) AS hold_until`,
    ),
    claimsSince: db.prepare(
      `SELECT coalesce(sum(n), 0) AS n, min(at) AS oldest FROM docket_flow_claims
       WHERE namespace = ? AND task_name = ? AND scope = 'task' AND group_key = '' AND at > ?`,
    ),
    groupClaimsSince: db.prepare(
      `SELECT coalesce(sum(n), 0) AS n, min(at) AS oldest FROM docket_flow_claims
       WHERE namespace = ? AND task_name = ? AND scope = 'group' AND group_key = ? AND at > ?`,
    ),
    // The groups with claimable runs, one index seek each (a loose index scan), with their head run (the first entry
    // of each group's range, one more seek) and last claim.
    claimableGroups: db.prepare(
      `WITH RECURSIVE g(k) AS (
         SELECT (SELECT min(group_key) FROM docket_runs INDEXED BY docket_runs_group_claim
           WHERE namespace = @namespace AND task_name = @task AND ${GROUP_CLAIMABLE})
         UNION ALL
         SELECT (SELECT min(group_key) FROM docket_runs INDEXED BY docket_runs_group_claim
           WHERE namespace = @namespace AND task_name = @task AND ${GROUP_CLAIMABLE} AND group_key > g.k)
         FROM g WHERE g.k IS NOT NULL)
       SELECT g.k AS group_key, f.last_claimed_at,
         (SELECT run_id FROM docket_runs INDEXED BY docket_runs_group_claim
           WHERE namespace = @namespace AND task_name = @task AND group_key = g.k AND ${GROUP_CLAIMABLE}
           ORDER BY priority DESC, claim_due_at LIMIT 1) AS head_run_id
       FROM g
       LEFT JOIN docket_flow_groups AS f ON f.namespace = @namespace AND f.task_name = @task AND f.group_key = g.k
       WHERE g.k IS NOT NULL`,
    ),
    groupsDue: groupsDueStatements(db, runColumns),
    insertClaim: db.prepare(
      `INSERT INTO docket_flow_claims (namespace, task_name, scope, group_key, at, n) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET n = n + excluded.n`,
    ),
    // `n > 0` (every row) lets the prune read the partial time index `docket_flow_claims_at` (`schema.ts`).
    pruneClaims: db.prepare(
      'DELETE FROM docket_flow_claims WHERE namespace = ? AND task_name = ? AND scope = ? AND at <= ? AND n > 0',
    ),
    touchGroup: db.prepare(
      `INSERT INTO docket_flow_groups (namespace, task_name, group_key, last_claimed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET last_claimed_at = excluded.last_claimed_at`,
    ),
    holdGroup: db.prepare(
      `INSERT INTO docket_flow_groups (namespace, task_name, group_key, hold_until) VALUES (?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET hold_until = max(coalesce(hold_until, 0), excluded.hold_until)`,
    ),
    markByGroup: markByGroupStatement(db),
  };
}

/** How many groups one `groupsDue` statement reads at most. */
export const GROUPS_PER_STATEMENT = 16;

/**
 * `groupsDue(count, versions)`: one statement (prepared once per shape) that reads the due runs of `count` groups of
 * a task, each group's highest priority first and earliest due first within it, up to its own limit, and stops at a
 * limit for all. Per group the parameters namespace, task, group, the `versions` task versions, now and the group's
 * limit, in that order; then the limit for all. `docket_runs_group_claim` keeps each group's claimable runs in that
 * order (priority descending), so each part stops at its limit, and the parts after the limit for all are not run.
 */
function groupsDueStatements(db: Database.Database, runColumns: string): FlowStatements['groupsDue'] {
  const prepared = new Map<string, Database.Statement<unknown[], unknown[]>>();
  const part = (versions: number) => `SELECT * FROM (SELECT ${runColumns} FROM docket_runs
    INDEXED BY docket_runs_group_claim
    WHERE namespace = ? AND task_name = ? AND group_key = ? AND ${GROUP_CLAIMABLE}
      AND task_version IN (${Array.from({ length: versions }, () => '?').join(', ')}) AND claim_due_at <= ?
    ORDER BY priority DESC, claim_due_at ${BOUND_LIMIT})`;
  return (count, versions) => {
    const key = `${count}:${versions}`;
    let statement = prepared.get(key);
    if (statement === undefined) {
      const parts = Array.from({ length: count }, () => part(versions)).join(' UNION ALL ');
      statement = db.prepare<unknown[], unknown[]>(`${parts} ${BOUND_LIMIT}`).raw(true);
      prepared.set(key, statement);
    }
    return statement;
  };
}
