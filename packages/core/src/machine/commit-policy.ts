import type { Json } from '../util/json.js';
import type { NewChildRun } from './run-write.js';
import { writeOf } from './run-write.js';
import { holdsLease, type TransitionInput, transition } from './state-machine.js';

export { holdsLease };

import { copyRun, type RunRecord } from './run-types.js';
import type { RunWrite } from './run-write.js';

/** A check's answer; `reason` and `detail` go into the history entry's detail when it fails. */
export type CheckResult = { ok: true } | { ok: false; reason?: string; detail?: Json };

/** A page's control as a commit decides it: next or end, the state, and the children `ctx.next` starts. */
export interface CommitControl {
  kind: 'next' | 'end';
  state: Json | null;
  children?: { runs: NewChildRun[]; childFailure: 'continue' | 'fail' } | null;
}

/** The input of a page's settle; with children, the write that makes them. */
function settleWrite(current: RunRecord, token: number, actor: string, control: CommitControl, now: number) {
  if (control.kind === 'end') return toWrite(current, { type: 'page_end', actor, leaseToken: token }, now);
  const children = control.children ?? null;
  const write = toWrite(
    current,
    {
      type: 'page_next',
      actor,
      leaseToken: token,
      state: control.state,
      ...(children === null ? {} : { children: { count: children.runs.length, childFailure: children.childFailure } }),
    },
    now,
  );
  if (write !== null && children !== null) write.children = children.runs;
  return write;
}

function toWrite(current: RunRecord, input: TransitionInput, now: number): RunWrite | null {
  return writeOf(transition(current, input, now));
}

/**
 * The first half of a page commit, before any application code: refused when the lease is lost (cancelled,
 * stopped, recovered, claimed again), and the run cancelled with `DEADLINE` when its deadline has passed. Pure.
 */
export function commitGate(
  current: RunRecord | null,
  token: number,
  actor: string,
  now: number,
): { kind: 'lost' } | { kind: 'deadline'; write: RunWrite | null } | { kind: 'open'; run: RunRecord } {
  if (!holdsLease(current, token)) return { kind: 'lost' };
  if (current.deadlineAt !== null && current.deadlineAt <= now) {
    return {
      kind: 'deadline',
      write: toWrite(current, { type: 'cancel', actor, reason: 'DEADLINE', leaseToken: token }, now),
    };
  }
  return { kind: 'open', run: current };
}

/**
 * The second half, after the commit-time check answered: `blocked` / `BUSINESS_CHANGED` when it failed (no effect
 * is written), otherwise the page's settle (`next` or `end`). The caller runs the effect only for `committed`. Pure.
 */
export function commitDecision(
  current: RunRecord,
  token: number,
  actor: string,
  control: CommitControl,
  check: CheckResult,
  checkDetail: Json,
  now: number,
): { kind: 'blocked' | 'committed'; write: RunWrite | null } {
  if (check?.ok !== true) {
    return {
      kind: 'blocked',
      write: toWrite(
        current,
        { type: 'check_failed', actor, phase: 'commit', leaseToken: token, detail: checkDetail },
        now,
      ),
    };
  }
  return { kind: 'committed', write: settleWrite(current, token, actor, control, now) };
}

/**
 * `commitGate` then `commitDecision` with a passed check, as one decision for a page with no commit-time check:
 * `null` when the lease is lost, the `DEADLINE` cancel when the deadline has passed, otherwise the page's settle. It
 * makes none of the objects those two answer, since it runs for nearly every page. Pure.
 */
export function plainCommitDecision(
  current: RunRecord | null,
  token: number,
  actor: string,
  control: CommitControl,
  now: number,
): RunWrite | null {
  if (!holdsLease(current, token)) return null;
  if (current.deadlineAt !== null && current.deadlineAt <= now) {
    return toWrite(current, { type: 'cancel', actor, reason: 'DEADLINE', leaseToken: token }, now);
  }
  return settleWrite(current, token, actor, control, now);
}

/**
 * Reserves one model call of the run's budget (no transition: the revision stays), or, when the budget is spent,
 * cancels the run with `MODEL_CALL_BUDGET` so no request is sent. Pure.
 */
export function planModelCall(
  current: RunRecord | null,
  token: number,
  actor: string,
  now: number,
): { kind: 'lost' } | { kind: 'exhausted'; write: RunWrite | null } | { kind: 'reserved'; write: RunWrite } {
  if (!holdsLease(current, token)) return { kind: 'lost' };
  if (current.modelCallLimit !== null && current.modelCallsUsed >= current.modelCallLimit) {
    const detail = { limit: current.modelCallLimit, used: current.modelCallsUsed };
    return {
      kind: 'exhausted',
      write: toWrite(current, { type: 'cancel', actor, reason: 'MODEL_CALL_BUDGET', leaseToken: token, detail }, now),
    };
  }
  const run = copyRun(current);
  run.modelCallsUsed = current.modelCallsUsed + 1;
  run.updatedAt = now;
  return { kind: 'reserved', write: { run, history: [], events: [] } };
}
