import type { RunRecord, RunStatus } from './run-types.js';

/**
 * Which runs a worker may claim, and in what order: the one definition every store's claim reads. A run is
 * claimable at `now` when its status is one of `statuses` and its claim due time (`claimDueAt`: its `dueAt` while
 * claimable, else none) is at or before `now`. Claimable runs are taken in `order`: higher `priority` first, then
 * earlier claim due time, then earlier `createdAt`. A run whose lease expired is taken back by the recovery sweep instead,
 * earliest expiry first (`recoverable`).
 *
 * The SQL stores keep the claim due time as a column (`claim_due_at`, NULL when not claimable) with an index on
 * `(namespace, task, version, priority, claim_due_at)`: each priority in use is one index range in claim-key order,
 * and several tasks' candidates are merged with `compareClaimOrder`. The memory store filters with `isClaimableAt`
 * and sorts with `compareClaimOrder`. Flow limits (concurrency, rate, groups, a paused task) narrow this definition.
 */
export const CLAIMABLE = Object.freeze({
  /** Statuses a claim selects (a `waiting` run only once its trigger time is due). */
  statuses: Object.freeze(['pending', 'retrying', 'waiting'] as const satisfies readonly RunStatus[]),
  /** The sort keys, most significant first. */
  order: Object.freeze([
    { key: 'priority', direction: 'desc' },
    { key: 'claimDueAt', direction: 'asc' },
    { key: 'createdAt', direction: 'asc' },
  ] as const),
  /** Statuses the recovery sweep takes back once their lease expired, earliest expiry first. */
  recoverable: Object.freeze(['running', 'pausing'] as const satisfies readonly RunStatus[]),
});

/** Statuses `claimDue` selects (`CLAIMABLE.statuses`). */
export const CLAIMABLE_STATUSES: readonly RunStatus[] = CLAIMABLE.statuses;

/** Whether a status is one a claim selects. */
export function hasClaimableStatus(status: RunStatus): boolean {
  return CLAIMABLE_STATUSES.includes(status);
}

/** The time a run is claimable from (its `dueAt` while its status is claimable), or `null`: the stored claim due time. */
export function claimDueAt(run: Pick<RunRecord, 'status' | 'dueAt'>): number | null {
  return hasClaimableStatus(run.status) ? run.dueAt : null;
}

/** Whether a claim at `now` selects the run (before core's plan decides what the claim does with it). */
export function isClaimableAt(run: Pick<RunRecord, 'status' | 'dueAt'>, now: number): boolean {
  const key = claimDueAt(run);
  return key !== null && key <= now;
}

/** Whether the recovery sweep at `now` selects the run: its lease is held by a `running` or `pausing` page and expired. */
export function isRecoverableAt(run: Pick<RunRecord, 'status' | 'lease'>, now: number): boolean {
  const recoverable: readonly RunStatus[] = CLAIMABLE.recoverable;
  return recoverable.includes(run.status) && run.lease !== null && run.lease.expiresAt <= now;
}

/** The values `CLAIMABLE.order` sorts by. */
export interface ClaimRank {
  priority: number;
  /** The claim due time (`claimDueAt`); `null` sorts as 0 (such a run is not claimable and never compared in a claim). */
  claimDueAt: number | null;
  createdAt: number;
}

/** Compares two candidates in `CLAIMABLE.order`: negative when `a` is claimed first. */
export function compareClaimOrder(a: ClaimRank, b: ClaimRank): number {
  return b.priority - a.priority || (a.claimDueAt ?? 0) - (b.claimDueAt ?? 0) || a.createdAt - b.createdAt;
}

/** A run's `ClaimRank`. */
export function claimRankOf(run: Pick<RunRecord, 'priority' | 'status' | 'dueAt' | 'createdAt'>): ClaimRank {
  return { priority: run.priority, claimDueAt: claimDueAt(run), createdAt: run.createdAt };
}

/**
 * Whether `task.run` may claim the run now, outside the claim order: what a worker would claim (`isClaimableAt`),
 * and also a `pending` or `blocked` run whatever its due time (an explicit claim takes a blocked run that can be
 * checked again).
 */
export function isExplicitlyClaimableAt(run: Pick<RunRecord, 'status' | 'dueAt' | 'trigger'>, now: number): boolean {
  if (run.status === 'pending' || run.status === 'blocked') return true;
  if (run.dueAt === null || run.dueAt > now) return false;
  if (run.status !== 'waiting') return true;
  return run.trigger !== null && 'at' in run.trigger;
}
