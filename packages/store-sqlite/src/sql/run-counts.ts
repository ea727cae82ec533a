import type { Statements } from './statements.js';

/**
 * The statuses whose runs `docket_run_counts` counts: parked (waiting, blocked, paused) and finished (success,
 * failed, cancelled). Pending, retrying, running and pausing runs are counted from the claim and lease indexes,
 * which hold exactly them, so the claim and settle of an ordinary run change one count: at its finish.
 */
export const COUNTED_STATUSES: ReadonlySet<string> = new Set([
  'waiting',
  'blocked',
  'paused',
  'success',
  'failed',
  'cancelled',
]);

/**
 * Adds a run's move from `before` to `after` to the counts, in the caller's transaction; `null` is a run inserted
 * (`before`) or deleted (`after`).
 */
export function countMove(
  s: Statements,
  namespace: string,
  taskName: string,
  taskVersion: string,
  before: string | null,
  after: string | null,
): void {
  if (before === after) return;
  if (before !== null && COUNTED_STATUSES.has(before)) s.addCount.run(namespace, taskName, taskVersion, before, -1);
  if (after !== null && COUNTED_STATUSES.has(after)) s.addCount.run(namespace, taskName, taskVersion, after, 1);
}

const FINISHED: ReadonlySet<string> = new Set(['success', 'failed', 'cancelled']);

/** Adds a run's settle (a move from an unfinished status into a finished one at `at`) to its minute's count. */
export function countSettle(s: Statements, namespace: string, before: string, after: string, at: number): void {
  if (!FINISHED.has(after) || FINISHED.has(before)) return;
  s.addSettled.run(namespace, at - (at % 60_000), 1);
}
