import { retryDelayMs } from './retry-policy.js';
import type { CallbackEventRecord, CallbackPolicy, RunError } from './run-types.js';

/** The error a dead letter keeps when its last delivery was abandoned: the deliverer died or lost its lease. */
export const ABANDONED_DELIVERY: RunError = {
  code: 'LEASE_EXPIRED',
  name: 'Error',
  message: 'the delivery lease expired without a result: the deliverer stopped or lost its lease',
  truncated: false,
};

/**
 * Claims an event for a delivery attempt: `pending`/`retrying` when due, or `delivering` whose lease expired (the
 * deliverer died), becomes `delivering` under a new lease with `deliveryAttempt + 1`. An abandoned delivery counts
 * as an attempt: when it was the last of `attempts`, the event becomes a dead letter instead; a late deliverer's
 * success still makes it `delivered` (see `recordDelivery`), its failure changes nothing. Pure; `null` when not
 * claimable.
 */
export function claimEvent(
  event: CallbackEventRecord,
  owner: string,
  leaseMs: number,
  attempts: number,
  now: number,
): CallbackEventRecord | null {
  const due = (event.status === 'pending' || event.status === 'retrying') && event.dueAt <= now;
  const abandoned = event.status === 'delivering' && event.lease !== null && event.lease.expiresAt <= now;
  if (!due && !abandoned) return null;
  const revision = event.revision + 1;
  if (abandoned && event.deliveryAttempt >= attempts) {
    return {
      ...event,
      status: 'dead_letter',
      revision,
      lease: null,
      deadAt: now,
      lastError: ABANDONED_DELIVERY,
      updatedAt: now,
    };
  }
  return {
    ...event,
    status: 'delivering',
    deliveryAttempt: event.deliveryAttempt + 1,
    revision,
    lease: { owner, token: revision, expiresAt: now + leaseMs },
    updatedAt: now,
  };
}

/**
 * Records a delivery attempt held under `token`: delivered, or retried with backoff, or a dead letter. A delivery that
 * succeeded is `delivered` whatever happened to its claim meanwhile (its lease expired and the event was claimed
 * again, retried or dead-lettered): the handler did its work. A failure under a lost lease changes nothing. Pure.
 */
export function recordDelivery(
  event: CallbackEventRecord,
  token: number,
  outcome: { ok: true } | { ok: false; error: RunError; random: number },
  policy: CallbackPolicy,
  now: number,
): CallbackEventRecord | null {
  const holds = event.status === 'delivering' && event.lease?.token === token;
  if (!holds && (!outcome.ok || event.status === 'delivered')) return null;
  const base = { ...event, revision: event.revision + 1, lease: null, updatedAt: now };
  if (outcome.ok) return { ...base, status: 'delivered', deliveredAt: now, deadAt: null, lastError: null };
  if (event.deliveryAttempt >= policy.attempts) {
    return { ...base, status: 'dead_letter', deadAt: now, lastError: outcome.error };
  }
  const delay = retryDelayMs(policy.backoff, event.deliveryAttempt, outcome.random);
  return { ...base, status: 'retrying', dueAt: now + delay, lastError: outcome.error };
}

/** Renews the lease of a delivery still held under `token` to `now + leaseMs` (a heartbeat), or `null`. Pure. */
export function renewDeliveryLease(
  event: CallbackEventRecord,
  token: number,
  leaseMs: number,
  now: number,
): CallbackEventRecord | null {
  if (event.status !== 'delivering' || event.lease === null || event.lease.token !== token) return null;
  const lease = { ...event.lease, expiresAt: now + leaseMs };
  return { ...event, lease, revision: event.revision + 1, updatedAt: now };
}

/** Puts a dead letter back to `pending` for a new series of attempts, `replayGeneration + 1`. Pure. */
export function replayEvent(event: CallbackEventRecord, now: number): CallbackEventRecord | null {
  if (event.status !== 'dead_letter') return null;
  return {
    ...event,
    status: 'pending',
    deliveryAttempt: 0,
    replayGeneration: event.replayGeneration + 1,
    revision: event.revision + 1,
    dueAt: now,
    deadAt: null,
    updatedAt: now,
  };
}

/** Gives a delivery back at close without a verdict: due again now, the attempt it used stays counted. Pure. */
export function releaseEvent(event: CallbackEventRecord, token: number, now: number): CallbackEventRecord | null {
  if (event.status !== 'delivering' || event.lease?.token !== token) return null;
  return { ...event, status: 'retrying', lease: null, dueAt: now, revision: event.revision + 1, updatedAt: now };
}
