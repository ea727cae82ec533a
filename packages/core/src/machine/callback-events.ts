import { type CallbackEventRecord, type CallbackKind, iso, type RunRecord } from './run-types.js';

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
    .map(({ kind, page }, index) => ({
      // A run an operator retried settles again on the same page: its later events get ids of their own.
      eventId:
        after.retries === 0 ? `${after.runId}:${page}:${kind}` : `${after.runId}:${page}:${kind}:${after.retries}`,
      namespace: after.namespace,
      runId: after.runId,
      taskName: after.taskName,
      taskVersion: after.taskVersion,
      kind,
      batchId: `${after.runId}:${page}`,
      // Strictly increasing per run, in creation order: a run's revision rises with every move, which emits at most
      // two events. Deliverers take a run's events one at a time in this order (see `Store.claimCallbackEvents`).
      sequence: after.revision * 4 + index,
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
