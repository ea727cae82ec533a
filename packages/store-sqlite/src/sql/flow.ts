import {
  EMPTY_SCOPE,
  type FlowHold,
  type FlowReader,
  type FlowRecorder,
  type FlowScopeState,
  type GroupTurn,
  RUN_COLUMNS,
  type RunRecord,
  rowToRun,
  rowToTask,
  runRowOf,
  TASK_COLUMNS,
  type TaskRecord,
  type TaskRow,
  taskValues,
} from '@docket/core/store';
import type Database from 'better-sqlite3';
import type { Statements } from '../statements.js';

type Scope = 'task' | 'group';
type ClaimsRow = { n: number; oldest: number | null };

/** The statements `flowStatements` prepares. */
export interface FlowStatements {
  selectTask: Database.Statement<[string, string], TaskRow>;
  listTasks: Database.Statement<[string], TaskRow>;
  upsertTask: Database.Statement<unknown[]>;
  updatePaused: Database.Statement<[number, number, number, string, string, number]>;
  holdTask: Database.Statement<[number, string, string]>;
  holdGroups: Database.Statement<[number, string, string]>;
  countLeased: Database.Statement<[string, string], { n: number }>;
  leasedByGroup: Database.Statement<[string, string], { group_key: string; n: number }>;
  claimsSince: Database.Statement<[string, string, number], ClaimsRow>;
  groupClaimsSince: Database.Statement<[string, string, number], ClaimsRow & { group_key: string }>;
  dueGroups: Database.Statement<[string, string, number], { group_key: string }>;
  groupRows: Database.Statement<
    [string, string],
    { group_key: string; last_claimed_at: number | null; hold_until: number | null }
  >;
  groupBandBelow: Database.Statement<[string, string, string, number], { priority: number }>;
  groupClaimable: Database.Statement<[string, string, string, number, number, number], unknown[]>;
  insertClaim: Database.Statement<[string, string, Scope, string, number]>;
  pruneClaims: Database.Statement<[string, string, Scope, number]>;
  touchGroup: Database.Statement<[string, string, string, number]>;
  holdGroup: Database.Statement<[string, string, string, number]>;
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
      `SELECT count(*) AS n FROM docket_runs INDEXED BY docket_runs_leased
       WHERE namespace = ? AND task_name = ? AND lease_owner IS NOT NULL`,
    ),
    leasedByGroup: db.prepare(
      `SELECT group_key, count(*) AS n FROM docket_runs INDEXED BY docket_runs_leased
       WHERE namespace = ? AND task_name = ? AND lease_owner IS NOT NULL GROUP BY group_key`,
    ),
    claimsSince: db.prepare(
      `SELECT count(*) AS n, min(at) AS oldest FROM docket_flow_claims
       WHERE namespace = ? AND task_name = ? AND scope = 'task' AND group_key = '' AND at > ?`,
    ),
    groupClaimsSince: db.prepare(
      `SELECT group_key, count(*) AS n, min(at) AS oldest FROM docket_flow_claims
       WHERE namespace = ? AND task_name = ? AND scope = 'group' AND at > ? GROUP BY group_key`,
    ),
    dueGroups: db.prepare(
      `SELECT DISTINCT group_key FROM docket_runs INDEXED BY docket_runs_group_claim
       WHERE namespace = ? AND task_name = ? AND claim_due_at IS NOT NULL AND claim_due_at <= ?`,
    ),
    groupRows: db.prepare(
      'SELECT group_key, last_claimed_at, hold_until FROM docket_flow_groups WHERE namespace = ? AND task_name = ?',
    ),
    groupBandBelow: db.prepare(
      `SELECT priority FROM docket_runs INDEXED BY docket_runs_group_claim
       WHERE namespace = ? AND task_name = ? AND group_key = ? AND priority < ? AND claim_due_at IS NOT NULL
       ORDER BY priority DESC LIMIT 1`,
    ),
    groupClaimable: db
      .prepare<[string, string, string, number, number, number], unknown[]>(
        `SELECT ${runColumns} FROM docket_runs INDEXED BY docket_runs_group_claim
         WHERE namespace = ? AND task_name = ? AND group_key = ? AND priority = ? AND claim_due_at IS NOT NULL
         AND claim_due_at <= ? ORDER BY claim_due_at LIMIT ?`,
      )
      .raw(true),
    insertClaim: db.prepare(
      'INSERT INTO docket_flow_claims (namespace, task_name, scope, group_key, at) VALUES (?, ?, ?, ?, ?)',
    ),
    pruneClaims: db.prepare(
      'DELETE FROM docket_flow_claims WHERE namespace = ? AND task_name = ? AND scope = ? AND at <= ?',
    ),
    touchGroup: db.prepare(
      `INSERT INTO docket_flow_groups (namespace, task_name, group_key, last_claimed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET last_claimed_at = excluded.last_claimed_at`,
    ),
    holdGroup: db.prepare(
      `INSERT INTO docket_flow_groups (namespace, task_name, group_key, hold_until) VALUES (?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET hold_until = max(coalesce(hold_until, 0), excluded.hold_until)`,
    ),
  };
}

/** A task's record, or `null`. */
export function selectTask(s: Statements, namespace: string, name: string): TaskRecord | null {
  const row = s.flow.selectTask.get(namespace, name);
  return row === undefined ? null : rowToTask(row);
}

/** Writes a task's whole record. */
export function writeTask(s: Statements, task: TaskRecord): void {
  s.flow.upsertTask.run(taskValues(task));
}

/** Stores a `RetryAfterError` hold of a run's task or group, in the run write's transaction. */
export function applyHold(s: Statements, run: RunRecord, hold: FlowHold): void {
  if (hold.scope === 'task') {
    s.flow.holdTask.run(hold.until, run.namespace, run.taskName);
    return;
  }
  s.flow.holdGroups.run(hold.until, run.namespace, run.taskName);
  s.flow.holdGroup.run(run.namespace, run.taskName, hold.group, hold.until);
}

/** Above every priority a run can have (-1000..1000). */
const ABOVE_ALL = 1001;

/** Flow control's reads for one namespace at `now`, inside the claim's transaction. */
export function sqliteFlowReader(
  s: Statements,
  namespace: string,
  now: number,
  dueOfVersion: (task: string, version: string, limit: number) => RunRecord[],
): FlowReader<RunRecord> {
  return {
    taskScope(task, rate, after): FlowScopeState {
      const leased = s.flow.countLeased.get(namespace, task)?.n ?? 0;
      if (rate === undefined) return { ...EMPTY_SCOPE, leased };
      const claims = s.flow.claimsSince.get(namespace, task, after);
      return { leased, claimsInWindow: claims?.n ?? 0, oldestClaimAt: claims?.oldest ?? null, holdUntil: null };
    },
    groupTurns(task, _versions, rate, after, at): GroupTurn[] {
      const leased = new Map(s.flow.leasedByGroup.all(namespace, task).map((r) => [r.group_key, r.n]));
      const claims = new Map(
        rate === undefined ? [] : s.flow.groupClaimsSince.all(namespace, task, after).map((r) => [r.group_key, r]),
      );
      const stored = new Map(s.flow.groupRows.all(namespace, task).map((r) => [r.group_key, r]));
      return s.flow.dueGroups.all(namespace, task, at).map(({ group_key: group }) => ({
        group,
        lastClaimedAt: stored.get(group)?.last_claimed_at ?? null,
        scope: {
          leased: leased.get(group) ?? 0,
          claimsInWindow: claims.get(group)?.n ?? 0,
          oldestClaimAt: claims.get(group)?.oldest ?? null,
          holdUntil: stored.get(group)?.hold_until ?? null,
        },
      }));
    },
    due(task, versions, group, limit) {
      if (group === null) {
        const rows: RunRecord[] = [];
        for (const version of versions) rows.push(...dueOfVersion(task, version, limit));
        return rows;
      }
      return dueOfGroup(s, namespace, task, versions, group, now, limit);
    },
  };
}

/** One group's due runs of the given versions, highest priority first, earliest due first within a priority. */
function dueOfGroup(
  s: Statements,
  namespace: string,
  task: string,
  versions: readonly string[],
  group: string,
  now: number,
  limit: number,
): RunRecord[] {
  const runs: RunRecord[] = [];
  for (let band = ABOVE_ALL; runs.length < limit; ) {
    const next = s.flow.groupBandBelow.get(namespace, task, group, band);
    if (next === undefined) break;
    band = next.priority;
    for (const values of s.flow.groupClaimable.all(namespace, task, group, band, now, limit - runs.length)) {
      const run = rowToRun(runRowOf(values));
      if (versions.includes(run.taskVersion)) runs.push(run);
    }
  }
  return runs;
}

/** Flow control's writes for one namespace, inside the claim's transaction. */
export function sqliteFlowRecorder(s: Statements, namespace: string): FlowRecorder {
  return {
    addClaims(task, group, at, count) {
      for (let i = 0; i < count; i++) {
        s.flow.insertClaim.run(namespace, task, group === null ? 'task' : 'group', group ?? '', at);
      }
    },
    prune(task, groups, before) {
      s.flow.pruneClaims.run(namespace, task, groups ? 'group' : 'task', before);
    },
    touchGroups(task, groups, at) {
      for (const group of groups) s.flow.touchGroup.run(namespace, task, group, at);
    },
  };
}
