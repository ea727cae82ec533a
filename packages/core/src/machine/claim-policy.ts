import type { RunRecord } from './run-types.js';
import type { RunWrite } from './run-write.js';
import { transitionWrite, writeOf } from './run-write.js';
import { transition } from './state-machine.js';

/**
 * The plain claim, described by core so that a store can write it without building each plan's write: a run that is
 * `pending`, or `retrying` and due, with no deadline at or before `now` (`qualifiesForPlainClaim`), becomes
 * `running` with reason `CLAIMED`, `revision + 1`, `fence + 1`, the lease `{ owner: actor, token: fence + 1,
 * expiresAt: leaseExpiresAt }`, no `dueAt`, `updatedAt = now`, and one history entry `{ seq: revision + 1, at,
 * from: status, to: 'running', reason: 'CLAIMED', actor }`; nothing else changes and no callback event is written.
 * A store that applies it must still call `plan` with each such row as it was before the write, and return the run
 * only where the plan is exactly that write (`isPlainClaimOf`). A run written but not returned holds a lease that no
 * worker executes: recovery takes it back when the lease expires. Only a bug makes the two differ.
 */
export interface PlainClaim {
  /** The claiming worker (`worker:<id>`): the lease owner and the history entry's actor. */
  actor: string;
  /** When the new lease expires (epoch ms). */
  leaseExpiresAt: number;
  /** The history entry's `at`: `now` as ISO-8601 UTC. */
  at: string;
}

/** Whether core's claim of `run` at `now` is the plain claim: `pending`, or `retrying` and due, and no deadline reached. */
export function qualifiesForPlainClaim(run: RunRecord, now: number): boolean {
  const due = run.status === 'pending' || (run.status === 'retrying' && (run.dueAt === null || run.dueAt <= now));
  return due && (run.deadlineAt === null || run.deadlineAt > now);
}

/**
 * Whether `write` is exactly the plain claim `claim` of `current` at `now` (see `PlainClaim`): what a store that
 * applied the claim itself checks against core's plan before it hands the run to a worker.
 */
export function isPlainClaimOf(current: RunRecord, write: RunWrite, claim: PlainClaim, now: number): boolean {
  const next = write.run;
  const entry = write.history[0];
  if (write.history.length !== 1 || entry === undefined || write.events.length !== 0) return false;
  const lease = next.lease;
  const fence = current.fence + 1;
  if (
    next.runId !== current.runId ||
    next.status !== 'running' ||
    next.reason !== 'CLAIMED' ||
    next.revision !== current.revision + 1 ||
    next.fence !== fence ||
    lease === null ||
    lease.owner !== claim.actor ||
    lease.token !== fence ||
    lease.expiresAt !== claim.leaseExpiresAt ||
    next.dueAt !== null ||
    next.updatedAt !== now
  ) {
    return false;
  }
  if (
    entry.seq !== next.revision ||
    entry.at !== claim.at ||
    entry.from !== current.status ||
    entry.to !== 'running' ||
    entry.reason !== 'CLAIMED' ||
    entry.actor !== claim.actor ||
    entry.detail !== undefined
  ) {
    return false;
  }
  // Every field a plain claim does not write keeps its value, by identity. Written out field by field (this runs for
  // every claimed run), then the fields counted, so that neither record has one the other lacks.
  if (
    next.namespace !== current.namespace ||
    next.taskName !== current.taskName ||
    next.taskVersion !== current.taskVersion ||
    next.definitionHash !== current.definitionHash ||
    next.query !== current.query ||
    next.state !== current.state ||
    next.page !== current.page ||
    next.pageFailures !== current.pageFailures ||
    next.businessFailures !== current.businessFailures ||
    next.scheduledRetries !== current.scheduledRetries ||
    next.recoveries !== current.recoveries ||
    next.error !== current.error ||
    next.trigger !== current.trigger ||
    next.deadlineAt !== current.deadlineAt ||
    next.modelCallLimit !== current.modelCallLimit ||
    next.modelCallsUsed !== current.modelCallsUsed ||
    next.idempotencyKey !== current.idempotencyKey ||
    next.inputHash !== current.inputHash ||
    next.policy !== current.policy ||
    next.events !== current.events ||
    next.recovery !== current.recovery ||
    next.triggerEvent !== current.triggerEvent ||
    next.createdAt !== current.createdAt ||
    next.priority !== current.priority ||
    next.retries !== current.retries ||
    next.traceParent !== current.traceParent ||
    next.group !== current.group ||
    next.rateLimited !== current.rateLimited ||
    next.parent !== current.parent ||
    next.children !== current.children
  ) {
    return false;
  }
  let fields = 0;
  for (const _ in next) fields++;
  for (const _ in current) fields--;
  return fields === 0;
}

/**
 * The claim decision for one selected run: a due time trigger first fires (`TIME_REACHED`), then the claim
 * (`CLAIMED`, or `DEADLINE` past the deadline); a parent waiting for its children is only cancelled at its deadline. `explicit` lets `task.run` claim a blocked run. Pure.
 */
export function planClaim(
  run: RunRecord,
  actor: string,
  leaseMs: number,
  now: number,
  explicit = false,
): RunWrite | null {
  if (run.status === 'waiting' && run.children !== null) {
    // A parent waiting for its children is due only at its deadline: the claim cancels it (and its children).
    if (run.deadlineAt === null || run.deadlineAt > now) return null;
    return writeOf(transition(run, { type: 'cancel', actor, reason: 'DEADLINE' }, now));
  }
  if (run.status !== 'waiting') {
    // Most claims: one transition, its arrays as they are (grown by `push`, each would reserve room for 17).
    const claimed = transition(run, { type: 'claim', actor, leaseMs, explicit }, now);
    return writeOf(claimed);
  }
  const fired = transition(run, { type: 'time_reached', actor }, now);
  if (!fired.ok) return null;
  const claimed = transition(fired.run, { type: 'claim', actor, leaseMs, explicit }, now);
  if (!claimed.ok) return transitionWrite(fired);
  return {
    run: claimed.run,
    history: [fired.history, claimed.history],
    events: fired.events.concat(claimed.events),
  };
}

/**
 * Finds the plan behind each run a claim answered (`writeOf(runId, index)`). A store usually answers every run it
 * planned, in the order it planned them: then each is read at its index. Otherwise a map by run id is made, the last
 * plan of a run winning (the one its write was made from). Cheaper than a map per claim: this runs for every claim.
 */
export function plannedWrites(
  planned: readonly RunWrite[],
  answered: readonly RunRecord[],
): (runId: string, index: number) => RunWrite | undefined {
  let inOrder = planned.length === answered.length;
  for (let i = 0; inOrder && i < answered.length; i++) {
    inOrder = planned[i]?.run.runId === answered[i]?.runId;
  }
  if (inOrder) return (_runId, index) => planned[index];
  const byId = new Map<string, RunWrite>();
  for (const write of planned) byId.set(write.run.runId, write);
  return (runId) => byId.get(runId);
}
