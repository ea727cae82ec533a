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

/** `RunInfo.callbacks` of each run of `runIds`, in their order, from events counted by run and status. */
export function countCallbacksByRun(
  runIds: readonly string[],
  rows: Iterable<{ run_id: string; status: string; n: number | string }>,
): CallbackCounts[] {
  const byRun = new Map<string, { status: string; n: number | string }[]>();
  for (const row of rows) {
    const own = byRun.get(row.run_id);
    if (own === undefined) byRun.set(row.run_id, [row]);
    else own.push(row);
  }
  return runIds.map((runId) => countCallbacks(byRun.get(runId) ?? []));
}
