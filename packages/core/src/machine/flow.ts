/**
 * Flow control's decisions: which claims the limits of a task and of its groups allow now, and when they may allow
 * more. Pure: a store reads what a limit needs (leases held, recent claims, holds) inside its claim transaction and
 * asks these gates, one candidate at a time.
 */

/** The longest window a rate may have (`perMs`): a day. */
export const RATE_WINDOW_MOST_MS = 86_400_000;

/** At most `max` claims in any interval of `perMs` milliseconds. */
export interface FlowRate {
  max: number;
  perMs: number;
}

/** The limits of one scope: the whole task, or each of its groups. */
export interface FlowLimits {
  /** The most runs holding a lease (`running` or `pausing`) at once. */
  concurrency?: number;
  rate?: FlowRate;
}

/** A task's flow limits (`define({ flow })`): for the whole fleet on one store. */
export interface TaskFlow extends FlowLimits {
  /** The same limits, applied to each group of the task separately. */
  group?: FlowLimits;
}

/** The stored group of a run started without one (the default group); `RunInfo.group` shows it as `null`. */
export const DEFAULT_GROUP = '';

/** What a store read of one scope (the task or one group) at claim time. */
export interface FlowScopeState {
  /** Runs of the scope that hold a lease (`running` or `pausing`), expired leases included until recovered. */
  leased: number;
  /** Claims of the scope in the rate window ending now (`claimedAfter(now, rate)` excluded). */
  claimsInWindow: number;
  /** The earliest claim time within that window, or `null`. */
  oldestClaimAt: number | null;
  /** No claim of the scope before this time (a `RetryAfterError` hold), or `null`. */
  holdUntil: number | null;
}

/** An empty scope: nothing leased, no claim, no hold. */
export const EMPTY_SCOPE: FlowScopeState = Object.freeze({
  leased: 0,
  claimsInWindow: 0,
  oldestClaimAt: null,
  holdUntil: null,
});

/** Claims at or before this time are outside the rate window that ends at `now`. */
export function claimedAfter(now: number, rate: FlowRate): number {
  return now - rate.perMs;
}

/**
 * One scope's limits as claims are admitted: `capacity()` is how many more it allows now, `take()` counts one claim,
 * and `reopensAt()` says when a closed gate may open by itself (`null`: only when a lease is given back).
 */
export class FlowGate {
  private leased: number;
  private claims: number;

  constructor(
    private readonly limits: FlowLimits | undefined,
    private readonly state: FlowScopeState,
    private readonly now: number,
  ) {
    this.leased = state.leased;
    this.claims = state.claimsInWindow;
  }

  /** How many more claims the scope allows now (`Infinity` without limits). */
  capacity(): number {
    if (this.state.holdUntil !== null && this.state.holdUntil > this.now) return 0;
    let left = Number.POSITIVE_INFINITY;
    const concurrency = this.limits?.concurrency;
    if (concurrency !== undefined) left = Math.min(left, concurrency - this.leased);
    const rate = this.limits?.rate;
    if (rate !== undefined) left = Math.min(left, rate.max - this.claims);
    return Math.max(0, left);
  }

  /** Counts `count` admitted claims. */
  take(count = 1): void {
    this.leased += count;
    this.claims += count;
  }

  /** When a gate with no capacity may open without a lease being given back, or `null`. */
  reopensAt(): number | null {
    const hold = this.state.holdUntil;
    if (hold !== null && hold > this.now) return hold;
    const rate = this.limits?.rate;
    const concurrencyFull = this.limits?.concurrency !== undefined && this.leased >= this.limits.concurrency;
    if (concurrencyFull || rate === undefined || this.claims < rate.max) return null;
    const oldest = this.state.oldestClaimAt ?? this.now;
    return oldest + rate.perMs;
  }
}

/** Whether a task's limits name any group limit (then claims go group by group). */
export function hasGroupLimits(flow: TaskFlow | null): boolean {
  return flow?.group?.concurrency !== undefined || flow?.group?.rate !== undefined;
}

/** What a store knows of a task when it claims: its limits, whether it is paused, and the holds on it. */
export interface TaskFlowState {
  flow: TaskFlow | null;
  paused: boolean;
  /** No run of the task is claimed before this time (`hold: 'task'`), or `null`. */
  holdUntil: number | null;
  /** The latest hold of any of its groups (`hold: 'group'`), or `null`: while in the future, claims go group by group. */
  groupHoldUntil: number | null;
}

/** Whether a claim of the task must go through flow control at `now` (else the plain claim order applies as it is). */
export function needsFlow(state: TaskFlowState | null, now: number): boolean {
  if (state === null) return false;
  return (
    state.paused ||
    state.flow !== null ||
    (state.holdUntil !== null && state.holdUntil > now) ||
    (state.groupHoldUntil !== null && state.groupHoldUntil > now)
  );
}

/** Whether claims of the task go group by group at `now`: it has group limits, or one of its groups is held. */
export function claimsByGroup(state: TaskFlowState, now: number): boolean {
  return hasGroupLimits(state.flow) || (state.groupHoldUntil !== null && state.groupHoldUntil > now);
}

/**
 * Whether claims of the task may go group by group, now or at any later time without a change to its record: it has
 * group limits, or a group hold was set on it (a hold time is only ever raised, never cleared). `claimsByGroup` is
 * true only when this is.
 */
export function mayClaimByGroup(state: Pick<TaskFlowState, 'flow' | 'groupHoldUntil'>): boolean {
  return hasGroupLimits(state.flow) || state.groupHoldUntil !== null;
}

/** What orders a group among others for a claim: its key, its last claim and, when the store read it, its head run. */
export interface GroupOrder {
  group: string;
  lastClaimedAt: number | null;
  /** The id of the run the group gives first (its oldest at its highest priority), when the store read it. */
  head?: string | null;
}

/**
 * Orders groups for a claim: the least recently claimed first (never claimed before all); among groups claimed
 * alike, the one whose head run was created first (run ids are time-ordered; a group without a head read after those
 * with one), then by key. Groups taken in the order their runs came keep a claim's rows together in a table kept in
 * run id order.
 */
export function compareGroupTurn(a: GroupOrder, b: GroupOrder): number {
  const at = (a.lastClaimedAt ?? -1) - (b.lastClaimedAt ?? -1);
  if (at !== 0) return at;
  const [x, y] = [a.head ?? null, b.head ?? null];
  if (x !== y) return x === null ? 1 : y === null ? -1 : x < y ? -1 : 1;
  return a.group < b.group ? -1 : a.group > b.group ? 1 : 0;
}

/** The earlier of two reopening times, `null` meaning "when a lease is given back" (never earlier than a time). */
export function earlierReopening(a: number | null | undefined, b: number | null): number | null {
  if (a === undefined) return b;
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}

/** One group with due runs, as a claim sees it: its order (last claim, head run) and its scope's state. */
export interface GroupTurn extends GroupOrder {
  /** Its scope's state, read when the claim comes to the group (a claim that is full reads no further group). */
  scope(): FlowScopeState;
}

/**
 * How many due runs a flow claim may take: `all` of the task's due runs in the claim order up to `take`, or `take`
 * runs from `groups` in their order (least recently claimed first), each group at most its own `take`: the store
 * reads group after group until it has `take` runs (a group may have fewer due runs than it may give). `heldBack` is
 * set when a limit, a hold or a pause left due runs unclaimed: when the claim may succeed again (`null`: once a lease
 * is given back).
 */
export interface FlowClaimPlan {
  mode: 'all' | 'groups';
  take: number;
  groups: { group: string; take: number }[];
  heldBack?: number | null;
}

/**
 * Decides a flow claim of one task at `now` from what the store read: the task's state and scope, and, when claims go
 * by group, each group with due runs. Every admitted run counts against both the task's and its group's limits.
 */
export function planFlowClaim(input: {
  state: TaskFlowState;
  task: FlowScopeState;
  groups: readonly GroupTurn[];
  limit: number;
  now: number;
}): FlowClaimPlan {
  const plan = planTaskClaim(input.state, input.task, input.limit, input.now);
  if (plan.mode === 'all') return plan;
  const left = plan.take;
  const walk = new GroupWalk(input.state.flow?.group, input.groups, input.now);
  // Enough groups to fill the claim even if each gives only one run: the rest wait for the next claim.
  const groups = walk.next(left, left);
  const open = groups.reduce((sum, turn) => sum + turn.take, 0);
  const decided: FlowClaimPlan = { mode: 'groups', take: Math.min(left, open), groups };
  if (walk.heldBack !== undefined) decided.heldBack = walk.heldBack;
  return decided;
}

/**
 * The task's part of a flow claim: a whole plan when claims do not go by group (`all`), else `groups` with no group
 * yet and `take` the most the task's own limits allow (`GroupWalk` chooses the groups).
 */
export function planTaskClaim(state: TaskFlowState, task: FlowScopeState, limit: number, now: number): FlowClaimPlan {
  if (state.paused) return { mode: 'all', take: 0, groups: [], heldBack: null };
  const taskGate = new FlowGate(state.flow ?? undefined, { ...task, holdUntil: state.holdUntil }, now);
  const capacity = taskGate.capacity();
  const left = Math.min(limit, capacity);
  if (left === 0) return { mode: 'all', take: 0, groups: [], heldBack: taskGate.reopensAt() };
  if (claimsByGroup(state, now)) return { mode: 'groups', take: left, groups: [] };
  if (capacity >= limit) return { mode: 'all', take: left, groups: [] };
  taskGate.take(left);
  return { mode: 'all', take: left, groups: [], heldBack: taskGate.reopensAt() };
}

/**
 * A task's groups in claim order (least recently claimed first), each admitted only when the claim comes to it: its
 * scope is read then, so a claim filled by its first groups reads no other. `heldBack` keeps the earliest reopening of
 * the closed groups passed.
 */
export class GroupWalk {
  private readonly turns: GroupTurn[];
  private at = 0;
  heldBack: number | null | undefined = undefined;

  constructor(
    private readonly limits: FlowLimits | undefined,
    turns: readonly GroupTurn[],
    private readonly now: number,
  ) {
    this.turns = [...turns].sort(compareGroupTurn);
  }

  /** Up to `count` more open groups, each with the most runs it may give now, at most `most`. */
  next(count: number, most: number): { group: string; take: number }[] {
    const open: { group: string; take: number }[] = [];
    while (open.length < count && this.at < this.turns.length) {
      const turn = this.turns[this.at++] as GroupTurn;
      const gate = new FlowGate(this.limits, turn.scope(), this.now);
      const take = Math.min(most, gate.capacity());
      if (take === 0) this.heldBack = earlierReopening(this.heldBack, gate.reopensAt());
      else open.push({ group: turn.group, take });
    }
    return open;
  }
}
