import { claimRankOf, compareClaimOrder, isClaimableAt } from '../../machine/claimable.js';
import { DEFAULT_GROUP, type FlowScopeState, type GroupTurn } from '../../machine/flow.js';
import type { RunRecord } from '../../machine/run-types.js';
import type { FlowReader, FlowRecorder } from '../flow.js';
import { groupKey, key, type MemoryState } from './state.js';

/** The key of a scope's claim times: the task's (`group: null`) or one group's. */
const claimsKey = (namespace: string, task: string, group: string | null) =>
  group === null ? `${key(namespace, task)}\u0000task` : `${groupKey(namespace, task, group)}\u0000group`;

function leased(run: RunRecord): boolean {
  return run.status === 'running' || run.status === 'pausing';
}

/** Orders two runs as a claim takes them, then by run id. */
function compareRuns(a: RunRecord, b: RunRecord): number {
  return compareClaimOrder(claimRankOf(a), claimRankOf(b)) || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);
}

function scopeOf(times: readonly number[] | undefined, after: number, leasedRuns: number, holdUntil: number | null) {
  const inWindow = (times ?? []).filter((t) => t > after);
  const scope: FlowScopeState = {
    leased: leasedRuns,
    claimsInWindow: inWindow.length,
    oldestClaimAt: inWindow.length === 0 ? null : Math.min(...inWindow),
    holdUntil,
  };
  return scope;
}

/** Flow control's reads over the memory store's maps, for one namespace at `now`. */
export function memoryFlowReader(m: MemoryState, namespace: string, now: number): FlowReader<RunRecord> {
  const runsOf = (task: string) =>
    [...m.runs.values()].filter((run) => run.namespace === namespace && run.taskName === task);
  return {
    taskScope(task, _rate, after) {
      const held = runsOf(task).filter(leased).length;
      return scopeOf(m.flowClaims.get(claimsKey(namespace, task, null)), after, held, null);
    },
    groupTurns(task, versions, _rate, after, at): GroupTurn[] {
      const runs = runsOf(task);
      // Each group with due runs, and its head: the run it gives first.
      const due = new Map<string, RunRecord>();
      for (const run of runs) {
        if (!versions.includes(run.taskVersion) || !isClaimableAt(run, at)) continue;
        const group = run.group ?? DEFAULT_GROUP;
        const head = due.get(group);
        if (head === undefined || compareRuns(run, head) < 0) due.set(group, run);
      }
      return [...due].map(([group, head]) => {
        const stored = m.groups.get(groupKey(namespace, task, group));
        const held = runs.filter((run) => (run.group ?? DEFAULT_GROUP) === group && leased(run)).length;
        const times = m.flowClaims.get(claimsKey(namespace, task, group));
        return {
          group,
          lastClaimedAt: stored?.lastClaimedAt ?? null,
          head: head.runId,
          scope: () => scopeOf(times, after, held, stored?.holdUntil ?? null),
        };
      });
    },
    due(task, versions, group, limit) {
      return runsOf(task)
        .filter((run) => versions.includes(run.taskVersion) && isClaimableAt(run, now))
        .filter((run) => group === null || (run.group ?? DEFAULT_GROUP) === group)
        .sort(compareRuns)
        .slice(0, limit);
    },
  };
}

/** Flow control's writes into the memory store's maps. */
export function memoryFlowRecorder(m: MemoryState, namespace: string): FlowRecorder {
  return {
    addClaims(task, group, at, count) {
      const k = claimsKey(namespace, task, group);
      const times = m.flowClaims.get(k) ?? [];
      for (let i = 0; i < count; i++) times.push(at);
      m.flowClaims.set(k, times);
    },
    prune(task, groups, before) {
      const prefix = groups ? `${key(namespace, task)}\u0000` : claimsKey(namespace, task, null);
      for (const [k, times] of m.flowClaims) {
        if (!k.startsWith(prefix) || (groups && !k.endsWith('\u0000group'))) continue;
        m.flowClaims.set(
          k,
          times.filter((t) => t > before),
        );
      }
    },
    touchGroups(task, groups, at) {
      for (const group of groups) {
        const gk = groupKey(namespace, task, group);
        const stored = m.groups.get(gk) ?? { lastClaimedAt: null, holdUntil: null };
        m.groups.set(gk, { ...stored, lastClaimedAt: at });
      }
    },
  };
}
