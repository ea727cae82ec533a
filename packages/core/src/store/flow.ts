/**
 * The part of flow control every store repeats: a task's record at registration, the holds a write puts on it, a
 * flow claim's candidates from what the store reads, and the claims it records afterwards. Core's decisions are in
 * `machine/flow.ts`; a store supplies the reads (`FlowReader`) and the writes (`FlowRecorder`) in its claim
 * transaction.
 */
import { claimRankOf, compareClaimOrder } from '../machine/claimable.js';
import {
  claimsByGroup,
  DEFAULT_GROUP,
  type FlowClaimPlan,
  type FlowRate,
  type FlowScopeState,
  type GroupTurn,
  GroupWalk,
  planFlowClaim,
  planTaskClaim,
  RATE_WINDOW_MOST_MS,
  type TaskFlowState,
} from '../machine/flow.js';
import type { RunRecord } from '../machine/run-types.js';
import type { FlowHold } from '../machine/run-write.js';
import type { DefinitionRecord, SelectRequest, TaskKey, TaskRecord } from './contract.js';

/** A task's record after `def` is registered: its versions grown, its limits replaced; a new task is not paused. */
export function registeredTask(current: TaskRecord | null, def: DefinitionRecord, now: number): TaskRecord {
  if (current === null) {
    return {
      namespace: def.namespace,
      name: def.name,
      versions: [def.version],
      flow: def.flow,
      paused: false,
      revision: 1,
      holdUntil: null,
      groupHoldUntil: null,
      updatedAt: now,
    };
  }
  const versions = current.versions.includes(def.version) ? current.versions : [...current.versions, def.version];
  return { ...current, versions, flow: def.flow, updatedAt: now };
}

/** The task's hold times after a `hold` (a later hold never shortens an earlier one). */
export function heldTask(
  current: Pick<TaskRecord, 'holdUntil' | 'groupHoldUntil'>,
  hold: FlowHold,
): { holdUntil: number | null; groupHoldUntil: number | null } {
  const later = (a: number | null) => (a === null ? hold.until : Math.max(a, hold.until));
  return hold.scope === 'task'
    ? { holdUntil: later(current.holdUntil), groupHoldUntil: current.groupHoldUntil }
    : { holdUntil: current.holdUntil, groupHoldUntil: later(current.groupHoldUntil) };
}

/** A task's state as a claim reads it. */
export function flowStateOf(task: TaskRecord | null | undefined): TaskFlowState | null {
  if (task === null || task === undefined) return null;
  return { flow: task.flow, paused: task.paused, holdUntil: task.holdUntil, groupHoldUntil: task.groupHoldUntil };
}

/** What a flow claim reads, inside the claim's transaction. `R` is the store's candidate row. */
export interface FlowReader<R> {
  /** The task's runs holding a lease and its claims since `after` (when it has a rate). */
  taskScope(taskName: string, rate: FlowRate | undefined, after: number): FlowScopeState;
  /** Each group of the task with runs of `versions` due at `now`, with its scope (leases, claims since `after`, hold). */
  groupTurns(
    taskName: string,
    versions: readonly string[],
    rate: FlowRate | undefined,
    after: number,
    now: number,
  ): GroupTurn[];
  /** Up to `limit` due runs of the versions (of one group, or of any with `null`), in the claim order. */
  due(taskName: string, versions: readonly string[], group: string | null, limit: number): R[];
  /**
   * Optional: `due` for several groups at once, each up to its `take`, group after group, and at most `most` in all
   * (a store may stop reading there: the groups after the last one that gave a run are then left for a later claim).
   */
  dueOfGroups?(
    taskName: string,
    versions: readonly string[],
    turns: readonly { group: string; take: number }[],
    most: number,
  ): R[];
}

/** How many groups a claim asks `dueOfGroups` for at once. */
const GROUPS_AT_ONCE = 16;

/**
 * One flow-controlled task's candidates for a claim of at most `limit` runs: what `planFlowClaim` allows, read by
 * `reader`. Groups are admitted as their runs are read (`GroupWalk`), `GROUPS_AT_ONCE` at a time, so a claim filled by
 * its first groups reads the scope of no other. Tells `request.heldBack` when limits left due runs unclaimed.
 */
export function flowCandidates<R>(
  reader: FlowReader<R>,
  state: TaskFlowState,
  taskName: string,
  versions: readonly string[],
  request: Pick<SelectRequest, 'limit' | 'now' | 'heldBack'>,
): R[] {
  const { now } = request;
  const flow = state.flow;
  const task = state.paused ? EMPTY : reader.taskScope(taskName, flow?.rate, windowStart(now, flow?.rate));
  const plan = planTaskClaim(state, task, request.limit, now);
  if (plan.mode === 'all') {
    if (plan.heldBack !== undefined) request.heldBack?.(plan.heldBack);
    return plan.take === 0 ? [] : reader.due(taskName, versions, null, plan.take);
  }
  const after = windowStart(now, flow?.group?.rate);
  const walk = new GroupWalk(flow?.group, reader.groupTurns(taskName, versions, flow?.group?.rate, after, now), now);
  const rows: R[] = [];
  const step = reader.dueOfGroups === undefined ? 1 : GROUPS_AT_ONCE;
  while (rows.length < plan.take) {
    const left = plan.take - rows.length;
    const turns = walk.next(step, left);
    const first = turns[0];
    if (first === undefined) break;
    const read =
      reader.dueOfGroups === undefined
        ? reader.due(taskName, versions, first.group, first.take)
        : reader.dueOfGroups(taskName, versions, turns, left);
    rows.push(...read.slice(0, left));
  }
  if (walk.heldBack !== undefined) request.heldBack?.(walk.heldBack);
  return rows;
}

/**
 * Core's plan for one flow-controlled task (`planFlowClaim`) from what the store reads: `task()` and, when claims go
 * by group, `groups()` are only called when the plan needs them. Tells `request.heldBack` when limits held runs back.
 */
export function flowPlanOf(
  state: TaskFlowState,
  task: () => FlowScopeState,
  groups: () => GroupTurn[],
  request: Pick<SelectRequest, 'limit' | 'now' | 'heldBack'>,
): FlowClaimPlan {
  const { now } = request;
  const byGroup = !state.paused && claimsByGroup(state, now);
  const plan = planFlowClaim({
    state,
    task: state.paused ? EMPTY : task(),
    groups: byGroup ? groups() : [],
    limit: request.limit,
    now,
  });
  if (plan.heldBack !== undefined) request.heldBack?.(plan.heldBack);
  return plan;
}

/**
 * A scope as a claim that shares its task's flow lock must see it: `more` leases and claims added for the claims that
 * may be in flight beside it, not committed yet (a store bounds how many there are and how many runs each takes).
 * Planned on crowded scopes, the claims that share a lock pass no limit together.
 */
export function crowdedScope(scope: FlowScopeState, more: number): FlowScopeState {
  return { ...scope, leased: scope.leased + more, claimsInWindow: scope.claimsInWindow + more };
}

/** The group turns with each group's scope crowded by `more` (see `crowdedScope`). */
export function crowdedTurns(turns: readonly GroupTurn[], more: number): GroupTurn[] {
  return turns.map((turn) => ({ ...turn, scope: () => crowdedScope(turn.scope(), more) }));
}

/**
 * Whether a plan made on crowded scopes takes as much as the plan made alone: the same mode, take and groups. When it
 * takes less, sharing the lock would hold runs back that the limits allow, and the claim should take the lock alone.
 */
export function takesAsMuch(crowded: FlowClaimPlan, alone: FlowClaimPlan): boolean {
  if (crowded.mode !== alone.mode || crowded.take !== alone.take) return false;
  if (crowded.groups.length !== alone.groups.length) return false;
  return crowded.groups.every(
    (turn, i) => turn.group === alone.groups[i]?.group && turn.take === alone.groups[i]?.take,
  );
}

/** The rate window's start for a scope with a rate (its claims after it count), else `now`. */
export function windowStart(now: number, rate: FlowRate | undefined): number {
  return rate === undefined ? now : now - rate.perMs;
}

const EMPTY: FlowScopeState = { leased: 0, claimsInWindow: 0, oldestClaimAt: null, holdUntil: null };

/** What a store writes after a flow claim: the claims its rates count, and when each group was last claimed. */
export interface FlowRecorder {
  /** Records `count` claims at `at` of the task (`group: null`) or of one group. */
  addClaims(taskName: string, group: string | null, at: number, count: number): void;
  /** Forgets the task's (`group: null`) or its groups' claims at or before `before`. */
  prune(taskName: string, groups: boolean, before: number): void;
  /** Marks the groups as claimed at `at`. */
  touchGroups(taskName: string, groups: readonly string[], at: number): void;
}

/**
 * How long claims are kept past their rate's window. A claim counts the claims after its own `now` less the window,
 * and its `now` may be behind another claimer's (a process slow between reading its clock and taking the lock, a host
 * whose clock is behind): pruned at the window by the later clock, claims the earlier one must count would be gone.
 */
const CLAIMS_KEPT_PAST_WINDOW_MS = 60_000;

/**
 * The time before which retention (`collect` with cutoff `runsBefore`) forgets flow claims: no rate counts them, the
 * longest window a minute late included, whatever rate their task has now or had (a task whose rate is removed no
 * longer prunes its own claims).
 */
export function flowClaimsCollectedBefore(runsBefore: number): number {
  return runsBefore - RATE_WINDOW_MOST_MS - CLAIMS_KEPT_PAST_WINDOW_MS;
}

/**
 * Records what a flow claim of one task took: `claimed` are the runs it wrote that now hold a lease. Claims are kept
 * only for the rates the task has, and a minute past their window (`CLAIMS_KEPT_PAST_WINDOW_MS`).
 */
export function recordFlowClaims(
  recorder: FlowRecorder,
  state: TaskFlowState,
  taskName: string,
  claimed: readonly RunRecord[],
  now: number,
): void {
  const flow = state.flow;
  const byGroup = new Map<string, number>();
  for (const run of claimed) {
    const group = run.group ?? DEFAULT_GROUP;
    byGroup.set(group, (byGroup.get(group) ?? 0) + 1);
  }
  if (flow?.rate !== undefined) {
    recorder.prune(taskName, false, now - flow.rate.perMs - CLAIMS_KEPT_PAST_WINDOW_MS);
    if (claimed.length > 0) recorder.addClaims(taskName, null, now, claimed.length);
  }
  // Groups in key order: claims recorded at once (claims that share a PostgreSQL task lock) lock their rows in one order.
  const groups = [...byGroup.keys()].sort();
  if (flow?.group?.rate !== undefined) {
    recorder.prune(taskName, true, now - flow.group.rate.perMs - CLAIMS_KEPT_PAST_WINDOW_MS);
    for (const group of groups) recorder.addClaims(taskName, group, now, byGroup.get(group) as number);
  }
  if (groups.length > 0 && claimsByGroup(state, now)) recorder.touchGroups(taskName, groups, now);
}

/** The request's tasks by name (flow control counts every version of a name together), in first-seen order. */
export function tasksByName(tasks: readonly TaskKey[]): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const task of tasks) {
    const versions = byName.get(task.name);
    if (versions === undefined) byName.set(task.name, [task.version]);
    else versions.push(task.version);
  }
  return byName;
}

/** Sorts candidates of several tasks (or versions) in the claim order, and keeps the first `limit`. */
export function mergeCandidates(runs: RunRecord[], limit: number): RunRecord[] {
  runs.sort((a, b) => compareClaimOrder(claimRankOf(a), claimRankOf(b)));
  return runs.length > limit ? runs.slice(0, limit) : runs;
}

/** Whether a run write leaves the run holding a lease: a claim a flow limit counts. */
export function holdsLeaseAfter(run: RunRecord): boolean {
  return (run.status === 'running' || run.status === 'pausing') && run.lease !== null;
}
