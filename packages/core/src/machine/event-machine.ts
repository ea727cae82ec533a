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
 * as an attempt: when it was the last of `attempts`, the event becomes a dead letter instead, and the late deliverer's
 * answer (its token no longer the event's) changes nothing. Pure; `null` when not claimable.
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

/** Settles a delivery attempt held under `token`: delivered, or retried with backoff, or a dead letter. Pure. */
export function recordDelivery(
  event: CallbackEventRecord,
  token: number,
  outcome: { ok: true } | { ok: false; error: RunError; random: number },
  policy: CallbackPolicy,
  now: number,
): CallbackEventRecord | null {
  if (event.status !== 'delivering' || event.lease?.token !== token) return null;
  const base = { ...event, revision: event.revision + 1, lease: null, updatedAt: now };
  if (outcome.ok) return { ...base, status: 'delivered', deliveredAt: now, lastError: null };
  if (event.deliveryAttempt >= policy.attempts) {
    return { ...base, status: 'dead_letter', deadAt: now, lastError: outcome.error };
  }
  const delay = retryDelayMs(policy.backoff, event.deliveryAttempt, outcome.random);
  return { ...base, status: 'retrying', dueAt: now + delay, lastError: outcome.error };
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
