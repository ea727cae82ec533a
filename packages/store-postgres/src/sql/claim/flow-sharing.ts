import { crowdedScope, crowdedTurns, flowPlanOf, type SelectRequest, takesAsMuch } from '@docket/core/store';
import type { Statement } from '../../wire/statement.js';
import type { LockedTask } from './flow-reads.js';

/**
 * How many flow claims of one task may hold its flow lock at once, each in a seat of its own. A claim alone takes the
 * lock exclusively; claims far below every limit share it (`pg_advisory_xact_lock_shared`), and a seat (a second
 * advisory lock, taken only if free) bounds how many do.
 */
export const FLOW_SEATS = 2;

/**
 * The most runs a claim that shares its task's flow lock takes. Every sharer plans as if each other seat held a claim
 * of this many runs not committed yet (`crowdedScope`), so that together they pass no limit: the same number in every
 * process on the store.
 */
export const SHARED_TAKE_MAX = 256;

/** The leases and claims a sharer adds for the claims beside it. */
const BESIDE = (FLOW_SEATS - 1) * SHARED_TAKE_MAX;

const lockKey = (namespace: string, task: string) => `${namespace}:flow:${task}`;

/**
 * The statement that takes a task's flow lock alone, held to the end of the transaction: the claims of the task take
 * turns, so each counts the others' leases and claims. It is a statement of its own: a statement's snapshot is taken
 * before the lock is granted, so the reads must come after it.
 */
export function flowLockStatement(namespace: string, task: string): Statement {
  return { text: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', params: [lockKey(namespace, task)] };
}

/**
 * The statements that share a task's flow lock: the lock in shared mode (it waits while a claim holds it alone), then
 * the first free seat, answered as `seat` (-1: none free, and the claim must not go on sharing).
 */
export function sharedLockStatements(namespace: string, task: string): Statement[] {
  const key = lockKey(namespace, task);
  const seats = Array.from({ length: FLOW_SEATS }, (_, i) => `${key}:seat:${i}`);
  const tries = seats.map((_, i) => `WHEN pg_try_advisory_xact_lock(hashtextextended($${i + 1}, 0)) THEN ${i}`);
  return [
    { text: 'SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))', params: [key] },
    { text: `SELECT CASE ${tries.join(' ')} ELSE -1 END AS seat`, params: seats },
  ];
}

/** The seat from the rows of the second of `sharedLockStatements`. */
export const seatOf = (rows: readonly unknown[] | undefined): number =>
  Number((rows?.[0] as { seat?: number | string } | undefined)?.seat ?? -1);

/**
 * Which tasks' flow claims share their lock: a task does until a claim finds that sharing would take less than its
 * limits allow, then takes it alone until a claim alone finds room for the claims beside it again.
 */
export class FlowSharing {
  private readonly alone = new Set<string>();

  /** Whether the next claim of the task tries to share its lock. */
  shares(namespace: string, task: string): boolean {
    return !this.alone.has(lockKey(namespace, task));
  }

  /**
   * The task as a claim of it, read under its lock, may plan on it, or `null` when it must not take runs: alone, the
   * task as read (noting whether the next claim could share); sharing, the task on crowded scopes when the claim holds
   * a seat and its plan on them takes as much as its plan alone, else `null` (and the next claim takes the lock alone).
   */
  admit(request: SelectRequest, task: LockedTask): LockedTask | null {
    const key = lockKey(request.namespace, task.name);
    const crowded = { ...task, scope: crowdedScope(task.scope, BESIDE), turns: crowdedTurns(task.turns, BESIDE) };
    // Asked for a sharer's most, so that a small claim alone does not let a large one try to share.
    const ask = { limit: SHARED_TAKE_MAX, now: request.now };
    const plan = (of: LockedTask) =>
      flowPlanOf(
        of.state,
        () => of.scope,
        () => of.turns,
        ask,
      );
    const roomy = takesAsMuch(plan(crowded), plan(task));
    const sharing = task.seat !== undefined;
    if (roomy && (!sharing || (task.seat as number) >= 0)) this.alone.delete(key);
    else this.alone.add(key);
    if (!sharing) return task;
    return this.alone.has(key) ? null : crowded;
  }
}
