// What every move of the state machine shares: the refusal, and the completion of an allowed move.
import type { Json } from '../util/json.js';
import { callbackEventsFor } from './callback-events.js';
import {
  type CallbackEventRecord,
  type HistoryEntry,
  iso,
  type Reason,
  type RunRecord,
  type RunStatus,
} from './run-types.js';
import type { TransitionInput } from './state-machine.js';
import { assertInTable } from './transition-table.js';

/** Why `transition` refused an input. */
export type Refusal = 'NOT_ALLOWED' | 'TERMINAL' | 'LEASE_LOST' | 'NOT_DUE';

/** The result of `transition`: the next run with its history entry and callback events, or a refusal. */
export type Decision =
  | { ok: true; run: RunRecord; history: HistoryEntry; events: CallbackEventRecord[] }
  | { ok: false; refusal: Refusal; message: string };

/** One kind of `TransitionInput`. */
export type InputOf<T extends TransitionInput['type']> = Extract<TransitionInput, { type: T }>;

/** A refusal with its message. */
export function refuse(refusal: Refusal, message: string): Decision {
  return { ok: false, refusal, message };
}

/** The refusal of an input the run's status does not take. */
export function notAllowed(run: RunRecord, input: TransitionInput): Decision {
  return refuse('NOT_ALLOWED', `${input.type} is not allowed from ${run.status}`);
}

/** Completes an allowed move: status, reason, revision + 1, its history entry and the callback events it emits. */
export function moved(
  run: RunRecord,
  next: RunRecord,
  input: TransitionInput,
  to: RunStatus,
  reason: Reason,
  now: number,
  detail?: Json,
): Decision {
  next.status = to;
  next.reason = reason;
  next.revision = run.revision + 1;
  next.updatedAt = now;
  assertInTable(input.type, run.status, to, reason);
  const history: HistoryEntry = { seq: next.revision, at: iso(now), from: run.status, to, reason, actor: input.actor };
  if (detail !== undefined) history.detail = detail;
  return { ok: true, run: next, history, events: callbackEventsFor(run, next, now) };
}
