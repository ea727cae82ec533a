import {
  EMPTY_SCOPE,
  type FlowHold,
  type FlowReader,
  type FlowRecorder,
  type FlowScopeState,
  type GroupTurn,
  type RunRecord,
  rowToRun,
  rowToTask,
  runRowOf,
  type TaskRecord,
  taskValues,
} from '@docket/core/store';
import type { Statements } from '../statements.js';

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
    groupTurns(task, _versions, rate, after): GroupTurn[] {
      const leased = new Map(s.flow.leasedByGroup.all(namespace, task).map((r) => [r.group_key, r.n]));
      const claims = new Map(
        rate === undefined ? [] : s.flow.groupClaimsSince.all(namespace, task, after).map((r) => [r.group_key, r]),
      );
      const groups = s.flow.claimableGroups.all(namespace, task, namespace, task, namespace, task);
      return groups.map((row) => ({
        group: row.group_key,
        lastClaimedAt: row.last_claimed_at,
        scope: {
          leased: leased.get(row.group_key) ?? 0,
          claimsInWindow: claims.get(row.group_key)?.n ?? 0,
          oldestClaimAt: claims.get(row.group_key)?.oldest ?? null,
          holdUntil: row.hold_until,
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
      s.flow.insertClaim.run(namespace, task, group === null ? 'task' : 'group', group ?? '', at, count);
    },
    prune(task, groups, before) {
      s.flow.pruneClaims.run(namespace, task, groups ? 'group' : 'task', before);
    },
    touchGroups(task, groups, at) {
      for (const group of groups) s.flow.touchGroup.run(namespace, task, group, at);
    },
  };
}
