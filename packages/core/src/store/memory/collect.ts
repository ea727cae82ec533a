import type { CollectRequest, CollectResult } from '../contract.js';
import { UNSETTLED_EVENT_STATUSES } from '../contract.js';
import { flowClaimsCollectedBefore } from '../flow.js';
import { isExpiredRun } from '../retention.js';
import { key, type MemoryState } from './state.js';

/**
 * `Store.collect`: terminal runs past retention whose callbacks are settled (with their history, key and delivered
 * events), delivered events and dead letters past retention, old receipts, flow groups idle since the cutoff, and flow
 * claims no rate counts any longer.
 */
export function collect(m: MemoryState, request: CollectRequest): Promise<CollectResult> {
  return m.exclusive(() => {
    const counts = { runs: 0, events: 0, deadLetters: 0 };
    const candidates = [...m.runs.entries()]
      .filter(([, run]) => run.namespace === request.namespace && (request.after === null || run.runId > request.after))
      .sort(([, a], [, b]) => (a.runId < b.runId ? -1 : 1))
      .slice(0, request.limit);
    for (const [k, run] of candidates) {
      if (!isExpiredRun(run.status, run.updatedAt, request.runsBefore)) continue;
      const own = [...m.events.values()].filter((e) => e.namespace === run.namespace && e.runId === run.runId);
      if (own.some((e) => UNSETTLED_EVENT_STATUSES.includes(e.status))) continue;
      m.runs.delete(k);
      m.history.delete(k);
      const idemKey = m.idempotencyKeyOf(run);
      if (idemKey !== null) m.idempotency.delete(idemKey);
      for (const e of own) {
        if (e.status !== 'delivered') continue;
        m.events.delete(key(e.namespace, e.eventId));
        counts.events++;
      }
      counts.runs++;
    }
    collectEvents(m, request, counts);
    for (const [k, receipt] of m.commands) {
      if (k.startsWith(`${request.namespace}\u0000`) && receipt.createdAt < request.runsBefore) m.commands.delete(k);
    }
    if (request.after === null) collectFlow(m, request);
    const next = candidates.length === request.limit ? (candidates.at(-1)?.[1].runId ?? null) : null;
    return { ...counts, next };
  });
}

function collectEvents(m: MemoryState, request: CollectRequest, counts: { events: number; deadLetters: number }) {
  for (const [k, event] of m.events) {
    if (event.namespace !== request.namespace) continue;
    if (event.status === 'delivered' && (event.deliveredAt ?? event.updatedAt) < request.runsBefore) {
      m.events.delete(k);
      counts.events++;
    } else if (event.status === 'dead_letter' && (event.deadAt ?? event.updatedAt) < request.deadLettersBefore) {
      m.events.delete(k);
      counts.deadLetters++;
    }
  }
}

/**
 * Once per pass (its first call): groups neither claimed nor held since retention's cutoff order as groups never
 * claimed, so their entries go; and claims no rate counts any longer go, whatever rate their task has now (one whose
 * rate was removed prunes none of its own).
 */
function collectFlow(m: MemoryState, request: CollectRequest): void {
  const prefix = `${request.namespace}\u0000`;
  for (const [k, group] of m.groups) {
    if (!k.startsWith(prefix)) continue;
    if (Math.max(group.lastClaimedAt ?? 0, group.holdUntil ?? 0) < request.runsBefore) m.groups.delete(k);
  }
  const before = flowClaimsCollectedBefore(request.runsBefore);
  for (const [k, times] of m.flowClaims) {
    if (!k.startsWith(prefix)) continue;
    const kept = times.filter((t) => t >= before);
    if (kept.length === 0) m.flowClaims.delete(k);
    else m.flowClaims.set(k, kept);
  }
}
