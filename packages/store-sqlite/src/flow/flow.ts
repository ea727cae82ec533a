import {
  DEFAULT_GROUP,
  EMPTY_SCOPE,
  type FlowHold,
  type FlowReader,
  type FlowRecorder,
  type FlowScopeState,
  type GroupTurn,
  groupsFoundEmpty,
  type RunRecord,
  rowToTask,
  runRowOf,
  type TaskRecord,
  taskValues,
} from '@docket/core/store';
import type { Statements } from '../statements.js';
import { markRunsByGroup } from './by-group.js';
import { GROUPS_PER_STATEMENT } from './statements.js';

/** A task's record, or `null`. */
export function selectTask(s: Statements, namespace: string, name: string): TaskRecord | null {
  const row = s.flow.selectTask.get(namespace, name);
  return row === undefined ? null : rowToTask(row);
}

/**
 * Writes a task's whole record over `current` (the stored one, `null` for none), flagging its runs for the group claim
 * index when it starts to go by group.
 */
export function writeTask(s: Statements, current: TaskRecord | null, task: TaskRecord): void {
  markRunsByGroup(s.flow.markByGroup, current, task);
  s.flow.upsertTask.run(taskValues(task));
}

/** Stores a `RetryAfterError` hold of a run's task or group, in the run write's transaction. */
export function applyHold(s: Statements, run: RunRecord, hold: FlowHold): void {
  if (hold.scope === 'task') {
    s.flow.holdTask.run(hold.until, run.namespace, run.taskName);
    return;
  }
  const task = selectTask(s, run.namespace, run.taskName);
  if (task !== null) markRunsByGroup(s.flow.markByGroup, task, { ...task, groupHoldUntil: hold.until });
  s.flow.holdGroups.run(hold.until, run.namespace, run.taskName);
  s.flow.holdGroup.run(run.namespace, run.taskName, hold.group, hold.until);
}

/** The SQLite flow reader: core's `FlowReader`, and whether a task's groups came from the kept list. */
export interface SqliteFlowReader extends FlowReader<RunRecord> {
  /** Whether the task's groups came from the list kept since an earlier claim (see `GroupLists`). */
  keptGroups(task: string): boolean;
}

/** Flow control's reads for one namespace at `now`, inside the claim's transaction. */
export function sqliteFlowReader(
  s: Statements,
  namespace: string,
  now: number,
  dueOfVersion: (task: string, version: string, limit: number) => RunRecord[],
): SqliteFlowReader {
  const kept = new Set<string>();
  const ofGroups = (
    task: string,
    versions: readonly string[],
    turns: readonly { group: string; take: number }[],
    most: number,
  ) => {
    const runs = dueOfGroups(s, { namespace, task, versions, now }, turns, most);
    const found = new Set(runs.map((run) => run.group ?? DEFAULT_GROUP));
    for (const group of groupsFoundEmpty(turns, found, runs.length >= most)) s.groupLists.drop(namespace, task, group);
    return runs;
  };
  return {
    taskScope(task, rate, after): FlowScopeState {
      const leased = s.flow.countLeased.get(namespace, task)?.n ?? 0;
      if (rate === undefined) return { ...EMPTY_SCOPE, leased };
      const claims = s.flow.claimsSince.get(namespace, task, after);
      return { leased, claimsInWindow: claims?.n ?? 0, oldestClaimAt: claims?.oldest ?? null, holdUntil: null };
    },
    groupTurns(task, _versions, rate, after): GroupTurn[] {
      const listed = s.groupLists.groups(namespace, task, now, () => s.flow.claimableGroups.all({ namespace, task }));
      if (listed.kept) kept.add(task);
      return listed.groups.map((row) => ({
        group: row.group_key,
        lastClaimedAt: row.last_claimed_at,
        head: row.head_run_id ?? null,
        scope: () => {
          const claims =
            rate === undefined ? undefined : s.flow.groupClaimsSince.get(namespace, task, row.group_key, after);
          const group = s.flow.groupScope.get(namespace, task, row.group_key, namespace, task, row.group_key);
          return {
            leased: group?.n ?? 0,
            claimsInWindow: claims?.n ?? 0,
            oldestClaimAt: claims?.oldest ?? null,
            holdUntil: group?.hold_until ?? null,
          };
        },
      }));
    },
    due(task, versions, group, limit) {
      if (group === null) {
        const rows: RunRecord[] = [];
        for (const version of versions) rows.push(...dueOfVersion(task, version, limit));
        return rows;
      }
      return ofGroups(task, versions, [{ group, take: limit }], limit);
    },
    dueOfGroups: ofGroups,
    keptGroups: (task) => kept.has(task),
  };
}

/**
 * The due runs of the given versions of each group (up to its `take`), at most `most` in all, `GROUPS_PER_STATEMENT`
 * groups a statement (a statement stops at `most`, so the groups after the last one that gave a run may not be read).
 */
function dueOfGroups(
  s: Statements,
  of: { namespace: string; task: string; versions: readonly string[]; now: number },
  turns: readonly { group: string; take: number }[],
  most: number,
): RunRecord[] {
  const runs: RunRecord[] = [];
  for (let i = 0; i < turns.length && runs.length < most; i += GROUPS_PER_STATEMENT) {
    const chunk = turns.slice(i, i + GROUPS_PER_STATEMENT);
    const params = chunk.flatMap((turn) => [of.namespace, of.task, turn.group, ...of.versions, of.now, turn.take]);
    const rows = s.flow.groupsDue(chunk.length, of.versions.length).all(...params, most - runs.length);
    for (const values of rows) runs.push(s.runOf(runRowOf(values)));
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
      s.groupLists.touched(namespace, task, groups, at);
    },
  };
}
