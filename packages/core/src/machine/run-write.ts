import type { CallbackEventRecord, HistoryEntry, RunRecord } from './run-types.js';
import type { Decision } from './state-machine.js';

/** One conditional write: the run's next version, the history entries that lead to it, and new callback events. */
export interface RunWrite {
  run: RunRecord;
  /** Zero entries keeps the revision (lease renewals, budget reservations); n entries raise it by n. */
  history: HistoryEntry[];
  events: CallbackEventRecord[];
  /**
   * A hold `RetryAfterError` put on the run's whole task or group (`hold: 'task' | 'group'`): no run of that scope is
   * claimed before `until`. Written with the run, in its transaction; a later hold never shortens an earlier one.
   */
  hold?: FlowHold;
  /**
   * Child runs the write creates (`ctx.next(state, { children })`), each with its first history entry, inserted in
   * the same transaction. A child whose idempotency key already names a run makes the whole write fail
   * (`IDEMPOTENCY_CONFLICT`), so that a page's children exist exactly once or not at all.
   */
  children?: NewChildRun[];
}

/** A child run a write creates, with its first history entry. */
export interface NewChildRun {
  run: RunRecord;
  history: HistoryEntry;
}

/** A hold on a task or on one of its groups (`RunWrite.hold`). */
export interface FlowHold {
  scope: 'task' | 'group';
  /** The held group (the run's own), for `scope: 'group'`. */
  group: string;
  until: number;
}

/** The write of one allowed transition: its next run, its one history entry and its callback events. */
export function transitionWrite(decision: Extract<Decision, { ok: true }>): RunWrite {
  return { run: decision.run, history: [decision.history], events: decision.events };
}

/** The write of a transition, or `null` when the state machine refused it. */
export function writeOf(decision: Decision): RunWrite | null {
  return decision.ok ? transitionWrite(decision) : null;
}
