import type { CallbackCounts } from '../machine/run-types.js';

/** `RunInfo.callbacks` from a run's callback events counted by status. */
export function countCallbacks(byStatus: Iterable<{ status: string; n: number | string }>): CallbackCounts {
  const counts = { pending: 0, delivered: 0, deadLetters: 0 };
  for (const { status, n } of byStatus) {
    if (status === 'delivered') counts.delivered += Number(n);
    else if (status === 'dead_letter') counts.deadLetters += Number(n);
    else counts.pending += Number(n);
  }
  return counts;
}
