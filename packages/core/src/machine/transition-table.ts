import type { Reason, RunStatus } from './run-types.js';
import type { TransitionInput } from './state-machine.js';

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

/** The whole transition table, as data. `transition` never produces a move outside it. */
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
    when: 'due (blocked by a business check: only by an explicit task.run)',
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
    input: 'page_next',
    from: ['running'],
    to: 'pending',
    reasons: ['PAGE_COMMITTED'],
    when: 'ctx.next committed',
  },
  {
    input: 'page_next',
    from: ['pausing'],
    to: 'paused',
    reasons: ['PAUSED'],
    when: 'ctx.next committed while a pause was asked',
  },
  {
    input: 'page_next',
    from: ['running'],
    to: 'waiting',
    reasons: ['CHILDREN_STARTED'],
    when: 'ctx.next committed with children: waits for them, no lease held',
  },
  {
    input: 'children_settled',
    from: ['waiting'],
    to: 'pending',
    reasons: ['CHILDREN_SETTLED'],
    when: "its last child settled (in that child settle's transaction)",
  },
  {
    input: 'child_failed',
    from: ['waiting', 'paused'],
    to: 'failed',
    reasons: ['CHILD_FAILED'],
    when: "childFailure 'fail': a child ended failed or cancelled",
  },
  {
    input: 'page_end',
    from: ['running', 'pausing'],
    to: 'success',
    reasons: ['COMPLETED'],
    when: 'ctx.end committed',
  },
  {
    input: 'attempt_failed',
    from: ['running'],
    to: 'retrying',
    reasons: ['ATTEMPT_FAILED', 'ATTEMPT_TIMEOUT'],
    when: 'throw or timeout, attempts left',
  },
  {
    input: 'attempt_failed',
    from: ['running'],
    to: 'retrying',
    reasons: ['RATE_LIMITED'],
    when: 'a RetryAfterError holding its group or task, fewer than 100 holds so far: no attempt consumed',
  },
  {
    input: 'attempt_failed',
    from: ['pausing'],
    to: 'paused',
    reasons: ['PAUSED'],
    when: 'throw or timeout while a pause was asked, attempts left',
  },
  {
    input: 'attempt_failed',
    from: ['running', 'pausing'],
    to: 'failed',
    reasons: ['ATTEMPTS_EXHAUSTED'],
    when: 'throw or timeout, no attempt left',
  },
  {
    input: 'attempt_failed',
    from: ['running', 'pausing'],
    to: 'failed',
    reasons: ['NON_RETRYABLE'],
    when: 'an error no attempt can get past (NonRetryableError, provider 4xx, provider configuration)',
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
    reasons: [
      'CANCELLED',
      'CALLER_CANCELLED',
      'OPERATOR_STOP',
      'DEADLINE',
      'MODEL_CALL_BUDGET',
      'PARENT_CANCELLED',
      'PARENT_FAILED',
    ],
    when: 'cancel, caller abort, operator stop, deadline, budget, or its parent ended (cancelled or CHILD_FAILED)',
  },
  {
    input: 'pause',
    from: ['waiting', 'pending', 'retrying', 'running'],
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
  {
    input: 'resume',
    from: ['paused'],
    to: 'waiting',
    reasons: ['RESUMED'],
    when: 'operator resume of a run paused before its trigger fired, or while children it started are unsettled',
  },
  {
    input: 'retry',
    from: ['failed'],
    to: 'pending',
    reasons: ['OPERATOR_RETRY'],
    when: 'operator retry of a failed run',
  },
];

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

/** Throws when a move is not in the table: `transition` can never write one. */
export function assertInTable(input: InputType, from: RunStatus | null, to: RunStatus, reason: Reason): void {
  if (!ALLOWED.get(input)?.get(from)?.get(to)?.has(reason)) {
    throw new Error(`internal: transition ${input} ${from} -> ${to} (${reason}) is not in the table`);
  }
}
