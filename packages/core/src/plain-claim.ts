import type { PlainClaim, RunWrite } from './store.js';
import type { RunRecord } from './types.js';

/** Whether core's claim of `run` at `now` is the plain claim: `pending`, or `retrying` and due, and no deadline reached. */
export function qualifiesForPlainClaim(run: RunRecord, now: number): boolean {
  const due = run.status === 'pending' || (run.status === 'retrying' && (run.dueAt === null || run.dueAt <= now));
  return due && (run.deadlineAt === null || run.deadlineAt > now);
}

/** The fields a plain claim writes; every other field of the run keeps its value (the same value, by identity). */
const CLAIM_FIELDS: ReadonlySet<string> = new Set<keyof RunRecord>([
  'status',
  'reason',
  'revision',
  'dueAt',
  'fence',
  'lease',
  'updatedAt',
]);

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
  // Compared field by field rather than through `runChanges`, and the fields counted rather than listed with
  // `Object.keys`: this runs for every claimed run.
  let fields = 0;
  for (const field in next) {
    if (!CLAIM_FIELDS.has(field) && next[field as keyof RunRecord] !== current[field as keyof RunRecord]) return false;
    fields++;
  }
  for (const _ in current) fields--;
  return fields === 0;
}
