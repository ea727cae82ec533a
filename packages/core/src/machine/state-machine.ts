import type { Json } from '../util/json.js';
import { retryDelayMs } from './retry-policy.js';
import {
  type CallbackEventRecord,
  type CallbackKind,
  copyRun,
  type HistoryEntry,
  iso,
  isTerminal,
  type Reason,
  type ReceivedEvent,
  type RunError,
  type RunRecord,
  type RunStatus,
} from './run-types.js';

/** Everything that can happen to a stored run; `transition` decides what it does. */
export type TransitionInput =
  | { type: 'time_reached'; actor: string }
  | { type: 'event_received'; actor: string; event: ReceivedEvent; detail?: Json }
  | { type: 'event_invalid'; actor: string; event: ReceivedEvent; detail?: Json }
  | { type: 'claim'; actor: string; leaseMs: number; explicit?: boolean }
  | { type: 'check_failed'; actor: string; phase: 'claim' | 'commit'; leaseToken: number; detail?: Json }
  | { type: 'settle_next'; actor: string; leaseToken: number; state: Json | null }
  | { type: 'settle_end'; actor: string; leaseToken: number }
  | { type: 'settle_failure'; actor: string; leaseToken: number; error: RunError; timedOut: boolean; random: number }
  | { type: 'contract_invalid'; actor: string; leaseToken: number; error: RunError }
  | { type: 'release'; actor: string; leaseToken: number }
  | { type: 'lease_expired'; actor: string; recoveryLimit: number }
  | { type: 'cancel'; actor: string; reason: CancelReason; detail?: Json; leaseToken?: number }
  | { type: 'pause'; actor: string; detail?: Json }
  | { type: 'resume'; actor: string; detail?: Json };

/** The reasons a run can be cancelled with. */
export type CancelReason = 'CANCELLED' | 'CALLER_CANCELLED' | 'OPERATOR_STOP' | 'DEADLINE' | 'MODEL_CALL_BUDGET';

/** The kinds of input `transition` understands, plus `start` which creates a run. */
export type InputType = TransitionInput['type'] | 'start';

/** One row of the transition table: an input moves a run from one of `from` to `to` with one of `reasons`. */
export interface TransitionRule {
  input: InputType;
  from: readonly (RunStatus | null)[];
  to: RunStatus;
  reasons: readonly Reason[];
  /** When this row applies, in one line. */
  when: string;
}

const LIVE: readonly RunStatus[] = ['waiting', 'pending', 'running', 'retrying', 'blocked', 'pausing', 'paused'];

/** The whole transition table of SPEC section 2, as data. `transition` never produces a move outside it. */
export const TRANSITION_TABLE: readonly TransitionRule[] = [
  { input: 'start', from: [null], to: 'pending', reasons: ['STARTED'], when: 'started without a trigger' },
  { input: 'start', from: [null], to: 'waiting', reasons: ['STARTED'], when: 'started with a time or event trigger' },
  { input: 'time_reached', from: ['waiting'], to: 'pending', reasons: ['TIME_REACHED'], when: 'trigger time reached' },
  { input: 'event_received', from: ['waiting'], to: 'pending', reasons: ['EVENT_RECEIVED'], when: 'valid event' },
  { input: 'event_invalid', from: ['waiting'], to: 'failed', reasons: ['TRIGGER_INVALID'], when: 'event refused' },
  {
    input: 'claim',
    from: ['pending', 'retrying', 'blocked'],
    to: 'running',
    reasons: ['CLAIMED'],
    when: 'due (blocked: only by an explicit task.run)',
  },
  {
    input: 'claim',
    from: ['pending', 'retrying', 'blocked'],
    to: 'cancelled',
    reasons: ['DEADLINE'],
    when: 'claimed after its deadline: no work',
  },
  {
    input: 'check_failed',
    from: ['running', 'pausing'],
    to: 'blocked',
    reasons: ['BUSINESS_STATE', 'BUSINESS_CHANGED'],
    when: 'check failed at claim / at commit',
  },
  {
    input: 'settle_next',
    from: ['running'],
    to: 'pending',
    reasons: ['PAGE_COMMITTED'],
    when: 'ctx.next committed',
  },
  {
    input: 'settle_next',
    from: ['pausing'],
    to: 'paused',
    reasons: ['PAUSED'],
    when: 'ctx.next committed while a pause was asked',
  },
  {
    input: 'settle_end',
    from: ['running', 'pausing'],
    to: 'success',
    reasons: ['COMPLETED'],
    when: 'ctx.end committed',
  },
  {
    input: 'settle_failure',
    from: ['running'],
    to: 'retrying',
    reasons: ['ATTEMPT_FAILED', 'ATTEMPT_TIMEOUT'],
    when: 'throw or timeout, attempts left',
  },
  {
    input: 'settle_failure',
    from: ['pausing'],
    to: 'paused',
    reasons: ['PAUSED'],
    when: 'throw or timeout while a pause was asked, attempts left',
  },
  {
    input: 'settle_failure',
    from: ['running', 'pausing'],
    to: 'failed',
    reasons: ['ATTEMPTS_EXHAUSTED'],
    when: 'throw or timeout, no attempt left',
  },
  {
    input: 'contract_invalid',
    from: ['running', 'pausing'],
    to: 'failed',
    reasons: ['HANDLER_CONTRACT_INVALID'],
    when: 'handler broke its contract',
  },
  { input: 'release', from: ['running'], to: 'pending', reasons: ['RELEASED'], when: 'close() gave the lease back' },
  {
    input: 'release',
    from: ['pausing'],
    to: 'paused',
    reasons: ['RELEASED'],
    when: 'close() gave the lease back while a pause was asked',
  },
  {
    input: 'lease_expired',
    from: ['running'],
    to: 'retrying',
    reasons: ['LEASE_EXPIRED'],
    when: 'automatic recovery under the limit',
  },
  {
    input: 'lease_expired',
    from: ['running'],
    to: 'blocked',
    reasons: ['RECOVERY_EXHAUSTED', 'RECOVERY_REQUIRED'],
    when: 'recovery limit reached / manual recovery',
  },
  {
    input: 'lease_expired',
    from: ['pausing'],
    to: 'paused',
    reasons: ['LEASE_EXPIRED'],
    when: 'lease lost while pausing',
  },
  {
    input: 'cancel',
    from: LIVE,
    to: 'cancelled',
    reasons: ['CANCELLED', 'CALLER_CANCELLED', 'OPERATOR_STOP', 'DEADLINE', 'MODEL_CALL_BUDGET'],
    when: 'cancel, caller abort, operator stop, deadline or budget',
  },
  {
    input: 'pause',
    from: ['pending', 'retrying', 'running'],
    to: 'paused',
    reasons: ['PAUSED'],
    when: 'operator pause, no live lease',
  },
  {
    input: 'pause',
    from: ['running'],
    to: 'pausing',
    reasons: ['PAUSE_REQUESTED'],
    when: 'operator pause, live lease',
  },
  {
    input: 'resume',
    from: ['paused', 'blocked', 'pausing'],
    to: 'pending',
    reasons: ['RESUMED'],
    when: 'operator resume, no live lease, due now',
  },
  {
    input: 'resume',
    from: ['paused', 'blocked', 'pausing'],
    to: 'retrying',
    reasons: ['RESUMED'],
    when: 'operator resume, no live lease, due later',
  },
  { input: 'resume', from: ['pausing'], to: 'running', reasons: ['RESUMED'], when: 'operator resume, live lease' },
];

/** Why `transition` refused an input. */
export type Refusal = 'NOT_ALLOWED' | 'TERMINAL' | 'LEASE_LOST' | 'NOT_DUE';

/** The result of `transition`: the next run with its history entry and callback events, or a refusal. */
export type Decision =
  | { ok: true; run: RunRecord; history: HistoryEntry; events: CallbackEventRecord[] }
  | { ok: false; refusal: Refusal; message: string };

function refuse(refusal: Refusal, message: string): Decision {
  return { ok: false, refusal, message };
}

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
  const from = run.status;
  if (isTerminal(from)) return refuse('TERMINAL', `run is ${from}`);
  const next = copyRun(run);
  let to: RunStatus;
  let reason: Reason;
  let detail: Json | undefined;

  switch (input.type) {
    case 'time_reached': {
      if (from !== 'waiting' || run.trigger === null || !('at' in run.trigger)) return notAllowed(run, input);
      if (run.dueAt === null || run.dueAt > now) return refuse('NOT_DUE', 'trigger time not reached');
      to = 'pending';
      reason = 'TIME_REACHED';
      next.dueAt = now;
      break;
    }
    case 'event_received':
    case 'event_invalid': {
      if (from !== 'waiting' || run.trigger === null || !('event' in run.trigger)) return notAllowed(run, input);
      detail = input.detail;
      next.triggerEvent = input.event;
      if (input.type === 'event_received') {
        to = 'pending';
        reason = 'EVENT_RECEIVED';
        next.dueAt = now;
      } else {
        to = 'failed';
        reason = 'TRIGGER_INVALID';
        next.dueAt = null;
      }
      break;
    }
    case 'claim': {
      const claimable =
        from === 'pending' ||
        (from === 'retrying' && (run.dueAt === null || run.dueAt <= now)) ||
        (from === 'blocked' && input.explicit === true);
      if (!claimable) {
        return from === 'retrying' ? refuse('NOT_DUE', 'retry not due yet') : notAllowed(run, input);
      }
      if (run.deadlineAt !== null && run.deadlineAt <= now) {
        to = 'cancelled';
        reason = 'DEADLINE';
        next.lease = null;
        next.dueAt = null;
        break;
      }
      to = 'running';
      reason = 'CLAIMED';
      next.fence = run.fence + 1;
      next.lease = { owner: input.actor, token: next.fence, expiresAt: now + input.leaseMs };
      next.dueAt = null;
      if (from === 'blocked') next.recoveries = 0;
      break;
    }
    case 'check_failed': {
      if (!holdsLease(run, input.leaseToken)) return refuse('LEASE_LOST', 'lease not held');
      to = 'blocked';
      reason = input.phase === 'claim' ? 'BUSINESS_STATE' : 'BUSINESS_CHANGED';
      detail = input.detail;
      next.lease = null;
      next.dueAt = null;
      break;
    }
    case 'settle_next': {
      if (!holdsLease(run, input.leaseToken)) return refuse('LEASE_LOST', 'lease not held');
      to = from === 'pausing' ? 'paused' : 'pending';
      reason = from === 'pausing' ? 'PAUSED' : 'PAGE_COMMITTED';
      next.state = input.state;
      next.page = run.page + 1;
      next.pageFailures = 0;
      next.recoveries = 0;
      next.error = null;
      next.lease = null;
      next.dueAt = now;
      break;
    }
    case 'settle_end': {
      if (!holdsLease(run, input.leaseToken)) return refuse('LEASE_LOST', 'lease not held');
      to = 'success';
      reason = 'COMPLETED';
      next.error = null;
      next.lease = null;
      next.dueAt = null;
      break;
    }
    case 'settle_failure': {
      if (!holdsLease(run, input.leaseToken)) return refuse('LEASE_LOST', 'lease not held');
      const failures = run.pageFailures + 1;
      next.pageFailures = failures;
      next.businessFailures = run.businessFailures + 1;
      next.error = input.error;
      next.lease = null;
      detail = { code: input.error.code, message: input.error.message };
      if (failures >= run.policy.attempts) {
        to = 'failed';
        reason = 'ATTEMPTS_EXHAUSTED';
        next.dueAt = null;
        break;
      }
      next.scheduledRetries = run.scheduledRetries + 1;
      next.dueAt = now + retryDelayMs(run.policy.backoff, failures, input.random);
      to = from === 'pausing' ? 'paused' : 'retrying';
      reason = from === 'pausing' ? 'PAUSED' : input.timedOut ? 'ATTEMPT_TIMEOUT' : 'ATTEMPT_FAILED';
      break;
    }
    case 'contract_invalid': {
      if (!holdsLease(run, input.leaseToken)) return refuse('LEASE_LOST', 'lease not held');
      to = 'failed';
      reason = 'HANDLER_CONTRACT_INVALID';
      next.error = input.error;
      next.lease = null;
      next.dueAt = null;
      detail = { message: input.error.message };
      break;
    }
    case 'release': {
      if (!holdsLease(run, input.leaseToken)) return refuse('LEASE_LOST', 'lease not held');
      to = from === 'pausing' ? 'paused' : 'pending';
      reason = 'RELEASED';
      next.lease = null;
      next.dueAt = now;
      break;
    }
    case 'lease_expired': {
      if ((from !== 'running' && from !== 'pausing') || run.lease === null) return notAllowed(run, input);
      if (run.lease.expiresAt > now) return refuse('NOT_DUE', 'lease still live');
      next.lease = null;
      detail = { owner: run.lease.owner, token: run.lease.token };
      if (from === 'pausing') {
        to = 'paused';
        reason = 'LEASE_EXPIRED';
        next.dueAt = now;
      } else if (run.recovery === 'manual') {
        to = 'blocked';
        reason = 'RECOVERY_REQUIRED';
        next.dueAt = null;
      } else if (run.recoveries + 1 > input.recoveryLimit) {
        to = 'blocked';
        reason = 'RECOVERY_EXHAUSTED';
        next.dueAt = null;
      } else {
        to = 'retrying';
        reason = 'LEASE_EXPIRED';
        next.recoveries = run.recoveries + 1;
        next.dueAt = now;
      }
      break;
    }
    case 'cancel': {
      if (input.leaseToken !== undefined && !holdsLease(run, input.leaseToken)) {
        return refuse('LEASE_LOST', 'lease not held');
      }
      to = 'cancelled';
      reason = input.reason;
      detail = input.detail;
      next.lease = null;
      next.dueAt = null;
      break;
    }
    case 'pause': {
      detail = input.detail;
      if (from === 'running' && hasLiveLease(run, now)) {
        to = 'pausing';
        reason = 'PAUSE_REQUESTED';
      } else if (from === 'running' || from === 'pending' || from === 'retrying') {
        to = 'paused';
        reason = 'PAUSED';
        next.lease = null;
      } else {
        return notAllowed(run, input);
      }
      break;
    }
    case 'resume': {
      if (from !== 'paused' && from !== 'blocked' && from !== 'pausing') return notAllowed(run, input);
      detail = input.detail;
      reason = 'RESUMED';
      next.recoveries = 0;
      if (from === 'pausing' && hasLiveLease(run, now)) {
        to = 'running';
      } else {
        next.lease = null;
        if (run.dueAt !== null && run.dueAt > now) {
          to = 'retrying';
        } else {
          to = 'pending';
          next.dueAt = now;
        }
      }
      break;
    }
  }

  next.status = to;
  next.reason = reason;
  next.revision = run.revision + 1;
  next.updatedAt = now;
  assertInTable(input.type, from, to, reason);
  const history: HistoryEntry = {
    seq: next.revision,
    at: iso(now),
    from,
    to,
    reason,
    actor: input.actor,
  };
  if (detail !== undefined) history.detail = detail;
  return { ok: true, run: next, history, events: callbackEventsFor(run, next, now) };
}

function notAllowed(run: RunRecord, input: TransitionInput): Decision {
  return refuse('NOT_ALLOWED', `${input.type} is not allowed from ${run.status}`);
}

/**
 * Every move the table allows, as nested maps (input, from, to) to the set of reasons: one lookup per level per
 * transition, and no key string made at each of the two transitions every run goes through.
 */
const ALLOWED = new Map<InputType, Map<RunStatus | null, Map<RunStatus, Set<Reason>>>>();
for (const rule of TRANSITION_TABLE) {
  const byFrom = ALLOWED.get(rule.input) ?? new Map<RunStatus | null, Map<RunStatus, Set<Reason>>>();
  ALLOWED.set(rule.input, byFrom);
  for (const from of rule.from) {
    const byTo = byFrom.get(from) ?? new Map<RunStatus, Set<Reason>>();
    byFrom.set(from, byTo);
    const reasons = byTo.get(rule.to) ?? new Set<Reason>();
    byTo.set(rule.to, reasons);
    for (const reason of rule.reasons) reasons.add(reason);
  }
}

function assertInTable(input: InputType, from: RunStatus | null, to: RunStatus, reason: Reason): void {
  if (!ALLOWED.get(input)?.get(from)?.get(to)?.has(reason)) {
    throw new Error(`internal: transition ${input} ${from} -> ${to} (${reason}) is not in the table`);
  }
}

/** The callback events a move from `before` to `after` emits, for the kinds the run's definition declared. */
export function callbackEventsFor(before: RunRecord, after: RunRecord, now: number): CallbackEventRecord[] {
  if (after.events.length === 0) return [];
  const kinds: { kind: CallbackKind; page: number }[] = [];
  const committedPage = after.page > before.page || after.status === 'success';
  if (committedPage) kinds.push({ kind: 'batchSettled', page: before.page });
  if (after.status === 'success') kinds.push({ kind: 'success', page: before.page });
  if (after.status === 'failed' || after.status === 'cancelled') kinds.push({ kind: 'failure', page: before.page });
  return kinds
    .filter(({ kind }) => after.events.includes(kind))
    .map(({ kind, page }) => ({
      eventId: `${after.runId}:${page}:${kind}`,
      namespace: after.namespace,
      runId: after.runId,
      taskName: after.taskName,
      taskVersion: after.taskVersion,
      kind,
      batchId: `${after.runId}:${page}`,
      sequence: page,
      status: 'pending',
      deliveryAttempt: 0,
      replayGeneration: 0,
      revision: 1,
      dueAt: now,
      timestamp: iso(now),
      query: after.query,
      state: after.state,
      error: after.error,
      lastError: null,
      lease: null,
      createdAt: now,
      updatedAt: now,
      deliveredAt: null,
      deadAt: null,
    }));
}
