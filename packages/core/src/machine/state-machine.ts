import type { Json } from '../util/json.js';
import { callbackEventsFor } from './callback-events.js';
import { awaitsChildren, childrenMove, childrenStarted } from './children-moves.js';
import { type Decision, type InputOf, moved, notAllowed, type Refusal, refuse } from './moved.js';
import { retryDelayMs } from './retry-policy.js';
import { copyRun, isTerminal, type ReceivedEvent, type RunError, type RunRecord } from './run-types.js';
import { type InputType, TRANSITION_TABLE, type TransitionRule } from './transition-table.js';

/** Everything that can happen to a stored run; `transition` decides what it does. */
export type TransitionInput =
  | { type: 'time_reached'; actor: string }
  | { type: 'event_received'; actor: string; event: ReceivedEvent; detail?: Json }
  | { type: 'event_invalid'; actor: string; event: ReceivedEvent; detail?: Json }
  | { type: 'claim'; actor: string; leaseMs: number; explicit?: boolean }
  | { type: 'check_failed'; actor: string; phase: 'claim' | 'commit'; leaseToken: number; detail?: Json }
  | {
      type: 'page_next';
      actor: string;
      leaseToken: number;
      state: Json | null;
      /** The page started this many children: the run waits for them (`CHILDREN_STARTED`). */
      children?: { count: number; childFailure: 'continue' | 'fail' };
    }
  | { type: 'children_settled'; actor: string; detail?: Json }
  | { type: 'child_failed'; actor: string; error: RunError; detail?: Json }
  | { type: 'page_end'; actor: string; leaseToken: number }
  | {
      type: 'attempt_failed';
      actor: string;
      leaseToken: number;
      error: RunError;
      timedOut: boolean;
      random: number;
      /** The error says no attempt can succeed (`classifyRetry`): `failed` / `NON_RETRYABLE` at once. */
      final?: boolean;
      /** The error asks the next attempt to wait at least this long (replaces a shorter backoff delay). */
      retryAfterMs?: number | null;
      /** The error holds back the run's whole group or task (`RetryAfterError`'s `hold`); `'run'` by default. */
      hold?: 'run' | 'group' | 'task';
    }
  | { type: 'contract_invalid'; actor: string; leaseToken: number; error: RunError }
  | { type: 'release'; actor: string; leaseToken: number }
  | { type: 'lease_expired'; actor: string; recoveryLimit: number }
  | { type: 'cancel'; actor: string; reason: CancelReason; detail?: Json; leaseToken?: number }
  | { type: 'pause'; actor: string; detail?: Json }
  | { type: 'resume'; actor: string; detail?: Json }
  | { type: 'retry'; actor: string; detail?: Json };

/** The reasons a run can be cancelled with. */
export type CancelReason =
  | 'CANCELLED'
  | 'CALLER_CANCELLED'
  | 'OPERATOR_STOP'
  | 'DEADLINE'
  | 'MODEL_CALL_BUDGET'
  | 'PARENT_CANCELLED'
  | 'PARENT_FAILED';

/** True when the run's lease exists and has not expired at `now`. */
export function hasLiveLease(run: RunRecord, now: number): boolean {
  return run.lease !== null && run.lease.expiresAt > now;
}

/** True while `token` is the run's current fencing token and the run is still running or pausing under a lease. */
export function holdsLease(run: RunRecord | null, token: number): run is RunRecord {
  return (
    run !== null && (run.status === 'running' || run.status === 'pausing') && run.lease !== null && run.fence === token
  );
}

/**
 * Decides what `input` does to `run` at time `now`: the next run (revision + 1), its one history entry and the
 * callback events the move emits, or a refusal. Pure: no I/O, no clock, no randomness (callers pass `random`).
 */
export function transition(run: RunRecord, input: TransitionInput, now: number): Decision {
  if (input.type === 'retry') return retryMove(run, input, now);
  if (isTerminal(run.status)) return refuse('TERMINAL', `run is ${run.status}`);
  switch (input.type) {
    case 'time_reached':
    case 'event_received':
    case 'event_invalid':
      return triggerMove(run, input, now);
    case 'claim':
      return claimMove(run, input, now);
    case 'lease_expired':
      return recoveryMove(run, input, now);
    case 'children_settled':
    case 'child_failed':
      return childrenMove(run, input, now);
    case 'cancel':
    case 'pause':
    case 'resume':
      return operatorMove(run, input, now);
    default:
      return pageEndMove(run, input, now);
  }
}

/** A waiting run's trigger: its time reached, or an event delivered (valid or refused). */
function triggerMove(
  run: RunRecord,
  input: InputOf<'time_reached' | 'event_received' | 'event_invalid'>,
  now: number,
): Decision {
  const trigger = run.trigger;
  if (input.type === 'time_reached') {
    if (run.status !== 'waiting' || trigger === null || !('at' in trigger)) return notAllowed(run, input);
    if (run.dueAt === null || run.dueAt > now) return refuse('NOT_DUE', 'trigger time not reached');
    const next = copyRun(run);
    next.dueAt = now;
    return moved(run, next, input, 'pending', 'TIME_REACHED', now);
  }
  if (run.status !== 'waiting' || trigger === null || !('event' in trigger)) return notAllowed(run, input);
  const next = copyRun(run);
  next.triggerEvent = input.event;
  if (input.type === 'event_received') {
    next.dueAt = now;
    return moved(run, next, input, 'pending', 'EVENT_RECEIVED', now, input.detail);
  }
  next.dueAt = null;
  return moved(run, next, input, 'failed', 'TRIGGER_INVALID', now, input.detail);
}

/**
 * Whether `task.run` may claim a blocked run to check it again: only when a business check blocked it
 * (`BUSINESS_STATE`, `BUSINESS_CHANGED`). A run blocked by recovery (`RECOVERY_REQUIRED`, `RECOVERY_EXHAUSTED`)
 * waits for a person: its effect may have landed, so only an operator's resume or cancel moves it.
 */
export function recheckable(run: RunRecord): boolean {
  return run.status === 'blocked' && (run.reason === 'BUSINESS_STATE' || run.reason === 'BUSINESS_CHANGED');
}

/** A claim: `running` under a new lease (fence + 1), or `cancelled` with `DEADLINE` when the deadline has passed. */
function claimMove(run: RunRecord, input: InputOf<'claim'>, now: number): Decision {
  const from = run.status;
  const claimable =
    from === 'pending' ||
    (from === 'retrying' && (run.dueAt === null || run.dueAt <= now)) ||
    (from === 'blocked' && input.explicit === true && recheckable(run));
  if (!claimable) return from === 'retrying' ? refuse('NOT_DUE', 'retry not due yet') : notAllowed(run, input);
  const next = copyRun(run);
  next.dueAt = null;
  if (run.deadlineAt !== null && run.deadlineAt <= now) {
    next.lease = null;
    return moved(run, next, input, 'cancelled', 'DEADLINE', now);
  }
  next.fence = run.fence + 1;
  next.lease = { owner: input.actor, token: next.fence, expiresAt: now + input.leaseMs };
  if (from === 'blocked') next.recoveries = 0;
  return moved(run, next, input, 'running', 'CLAIMED', now);
}

/** What the page holding the lease settles to: a failed check, the next page, the end, a failure, a release. */
function pageEndMove(
  run: RunRecord,
  input: InputOf<'check_failed' | 'page_next' | 'page_end' | 'attempt_failed' | 'contract_invalid' | 'release'>,
  now: number,
): Decision {
  if (!holdsLease(run, input.leaseToken)) return refuse('LEASE_LOST', 'lease not held');
  const pausing = run.status === 'pausing';
  const next = copyRun(run);
  next.lease = null;
  switch (input.type) {
    case 'check_failed':
      next.dueAt = null;
      return moved(
        run,
        next,
        input,
        'blocked',
        input.phase === 'claim' ? 'BUSINESS_STATE' : 'BUSINESS_CHANGED',
        now,
        input.detail,
      );
    case 'page_next':
      next.state = input.state;
      next.page = run.page + 1;
      next.pageFailures = 0;
      next.recoveries = 0;
      next.error = null;
      next.dueAt = now;
      if (input.children !== undefined) return childrenStarted(run, next, input, pausing, now);
      return moved(run, next, input, pausing ? 'paused' : 'pending', pausing ? 'PAUSED' : 'PAGE_COMMITTED', now);
    case 'page_end':
      next.error = null;
      next.dueAt = null;
      return moved(run, next, input, 'success', 'COMPLETED', now);
    case 'attempt_failed':
      return failureMove(run, next, input, now);
    case 'contract_invalid':
      next.error = input.error;
      next.dueAt = null;
      return moved(run, next, input, 'failed', 'HANDLER_CONTRACT_INVALID', now, { message: input.error.message });
    case 'release':
      next.dueAt = now;
      return moved(run, next, input, pausing ? 'paused' : 'pending', 'RELEASED', now);
  }
}

/** A page that threw or timed out: retried with backoff, or `failed` once the page has used its attempts. */
function failureMove(run: RunRecord, next: RunRecord, input: InputOf<'attempt_failed'>, now: number): Decision {
  const held = input.hold === 'group' || input.hold === 'task';
  if (held) next.rateLimited = run.rateLimited + 1;
  if (held && run.rateLimited < RATE_LIMITED_FREE_HOLDS && input.final !== true && run.status === 'running') {
    // A hold of the whole group or task: the run waits with it, no attempt consumed, no business failure.
    next.error = input.error;
    next.dueAt = now + (input.retryAfterMs ?? 0);
    return moved(run, next, input, 'retrying', 'RATE_LIMITED', now, {
      code: input.error.code,
      message: input.error.message,
      hold: input.hold ?? 'run',
    });
  }
  const failures = run.pageFailures + 1;
  next.pageFailures = failures;
  next.businessFailures = run.businessFailures + 1;
  next.error = input.error;
  const detail = { code: input.error.code, message: input.error.message };
  if (input.final === true || failures >= run.policy.attempts) {
    next.dueAt = null;
    return moved(
      run,
      next,
      input,
      'failed',
      input.final === true ? 'NON_RETRYABLE' : 'ATTEMPTS_EXHAUSTED',
      now,
      detail,
    );
  }
  next.scheduledRetries = run.scheduledRetries + 1;
  const backoff = retryDelayMs(run.policy.backoff, failures, input.random);
  next.dueAt = now + Math.max(backoff, input.retryAfterMs ?? 0);
  if (run.status === 'pausing') return moved(run, next, input, 'paused', 'PAUSED', now, detail);
  return moved(run, next, input, 'retrying', input.timedOut ? 'ATTEMPT_TIMEOUT' : 'ATTEMPT_FAILED', now, detail);
}

/** How many holds (`RATE_LIMITED`) a run gets for free: each further one counts as a failed attempt. */
export const RATE_LIMITED_FREE_HOLDS = 100;

/** A lease that expired: recovered (`retrying`), or `blocked` when recovery is manual or exhausted. */
function recoveryMove(run: RunRecord, input: InputOf<'lease_expired'>, now: number): Decision {
  const from = run.status;
  if ((from !== 'running' && from !== 'pausing') || run.lease === null) return notAllowed(run, input);
  if (run.lease.expiresAt > now) return refuse('NOT_DUE', 'lease still live');
  const next = copyRun(run);
  next.lease = null;
  const detail = { owner: run.lease.owner, token: run.lease.token };
  if (from === 'pausing') {
    next.dueAt = now;
    return moved(run, next, input, 'paused', 'LEASE_EXPIRED', now, detail);
  }
  if (run.recovery === 'manual' || run.recoveries + 1 > input.recoveryLimit) {
    next.dueAt = null;
    const reason = run.recovery === 'manual' ? 'RECOVERY_REQUIRED' : 'RECOVERY_EXHAUSTED';
    return moved(run, next, input, 'blocked', reason, now, detail);
  }
  next.recoveries = run.recoveries + 1;
  next.dueAt = now;
  return moved(run, next, input, 'retrying', 'LEASE_EXPIRED', now, detail);
}

/** A cancel (by the application, a caller, a budget, a deadline or an operator), a pause or a resume. */
function operatorMove(run: RunRecord, input: InputOf<'cancel' | 'pause' | 'resume'>, now: number): Decision {
  const from = run.status;
  const next = copyRun(run);
  if (input.type === 'cancel') {
    if (input.leaseToken !== undefined && !holdsLease(run, input.leaseToken)) {
      return refuse('LEASE_LOST', 'lease not held');
    }
    next.lease = null;
    next.dueAt = null;
    return moved(run, next, input, 'cancelled', input.reason, now, input.detail);
  }
  if (input.type === 'pause') {
    if (from === 'running' && hasLiveLease(run, now)) {
      return moved(run, next, input, 'pausing', 'PAUSE_REQUESTED', now, input.detail);
    }
    if (from !== 'running' && from !== 'pending' && from !== 'retrying' && from !== 'waiting') {
      return notAllowed(run, input);
    }
    next.lease = null;
    // A parent waiting for children keeps no due time while paused (see `childrenStarted`).
    if (from === 'waiting' && run.children !== null) next.dueAt = null;
    return moved(run, next, input, 'paused', 'PAUSED', now, input.detail);
  }
  if (from !== 'paused' && from !== 'blocked' && from !== 'pausing') return notAllowed(run, input);
  next.recoveries = 0;
  if (from === 'paused' && awaitsChildren(run)) {
    // Paused while it waited for children: it waits for them again, due at its deadline.
    next.dueAt = run.deadlineAt;
    return moved(run, next, input, 'waiting', 'RESUMED', now, input.detail);
  }
  if (from === 'paused' && awaitsTrigger(run)) {
    // Paused while it waited: it waits for its trigger again (a time already passed fires at the next claim).
    next.dueAt = run.trigger !== null && 'at' in run.trigger ? Date.parse(run.trigger.at) : null;
    return moved(run, next, input, 'waiting', 'RESUMED', now, input.detail);
  }
  if (from === 'pausing' && hasLiveLease(run, now))
    return moved(run, next, input, 'running', 'RESUMED', now, input.detail);
  next.lease = null;
  if (run.dueAt !== null && run.dueAt > now) return moved(run, next, input, 'retrying', 'RESUMED', now, input.detail);
  next.dueAt = now;
  return moved(run, next, input, 'pending', 'RESUMED', now, input.detail);
}

/**
 * Whether a paused run was paused before its trigger fired: it has a trigger, was never claimed (`fence` 0), and an
 * event trigger has received no event. A time trigger that fired before the pause is told apart by nothing, and
 * needs nothing: waiting again with its time passed, it fires at the next claim.
 */
function awaitsTrigger(run: RunRecord): boolean {
  if (run.trigger === null || run.fence !== 0) return false;
  return 'at' in run.trigger || run.triggerEvent === null;
}

/**
 * An operator's retry of a `failed` run: `pending` again with `OPERATOR_RETRY`, its page and state kept and the page's
 * attempt counter reset; its last error stays readable until a page commits. Any other status is refused.
 */
function retryMove(run: RunRecord, input: InputOf<'retry'>, now: number): Decision {
  if (run.status !== 'failed') return notAllowed(run, input);
  const next = copyRun(run);
  next.pageFailures = 0;
  next.recoveries = 0;
  next.retries = run.retries + 1;
  next.lease = null;
  next.dueAt = now;
  return moved(run, next, input, 'pending', 'OPERATOR_RETRY', now, input.detail);
}

export {
  awaitsChildren,
  callbackEventsFor,
  type Decision,
  type InputType,
  type Refusal,
  TRANSITION_TABLE,
  type TransitionRule,
};
