import type { PlainClaim, RunWrite } from './store.js';
import type { RunRecord } from './types.js';

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
    next.createdAt !== current.createdAt
  ) {
    return false;
  }
  let fields = 0;
  for (const _ in next) fields++;
  for (const _ in current) fields--;
  return fields === 0;
}
