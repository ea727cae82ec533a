import type { CallbackEventRecord } from '../../machine/run-types.js';
import { checkEventWrite } from '../checks.js';
import {
  type CallbackEventSelectRequest,
  type EventPlan,
  type ListCallbackEventsRequest,
  UNSETTLED_EVENT_STATUSES,
} from '../contract.js';
import { clone, key, type MemoryState, planEach } from './state.js';

/** `Store.claimCallbackEvents`: due or abandoned events of the wanted tasks and kinds, by due time then id. */
export function claimCallbackEvents(
  m: MemoryState,
  request: CallbackEventSelectRequest,
): Promise<CallbackEventRecord[]> {
  return m.exclusive(() => {
    // A run's events are delivered one at a time in sequence order: only its earliest unsettled one is a candidate.
    const earliest = new Map<string, number>();
    for (const event of m.events.values()) {
      if (!UNSETTLED_EVENT_STATUSES.includes(event.status)) continue;
      const known = earliest.get(event.runId);
      if (known === undefined || event.sequence < known) earliest.set(event.runId, event.sequence);
    }
    const candidates = [...m.events.values()]
      .filter((event) => {
        if (event.namespace !== request.namespace) return false;
        if (event.sequence > (earliest.get(event.runId) ?? event.sequence)) return false;
        const task = request.tasks.find((t) => t.name === event.taskName && t.version === event.taskVersion);
        if (!task?.kinds.includes(event.kind)) return false;
        const due = (event.status === 'pending' || event.status === 'retrying') && event.dueAt <= request.now;
        const abandoned = event.status === 'delivering' && event.lease !== null && event.lease.expiresAt <= request.now;
        return due || abandoned;
      })
      .sort((a, b) => a.dueAt - b.dueAt || (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0));
    return planEach(candidates, request.limit, request.plan, (event, next) => {
      checkEventWrite(event, next);
      m.events.set(key(event.namespace, event.eventId), clone(next));
      return clone(next);
    });
  });
}

/** `Store.transactCallbackEvent`. */
export function transactCallbackEvent<T>(
  m: MemoryState,
  namespace: string,
  eventId: string,
  plan: EventPlan<T>,
): Promise<T> {
  return m.exclusive(() => {
    const current = m.events.get(key(namespace, eventId));
    const { write, value } = plan(current ? clone(current) : null);
    if (write !== null) {
      if (!current) throw new Error('internal: write for a missing event');
      checkEventWrite(current, write);
      m.events.set(key(namespace, eventId), clone(write));
    }
    return value;
  });
}

/** `Store.listCallbackEvents`: events in one status, newest first, below a cursor. */
export async function listCallbackEvents(
  m: MemoryState,
  request: ListCallbackEventsRequest,
): Promise<CallbackEventRecord[]> {
  return [...m.events.values()]
    .filter((e) => e.namespace === request.namespace && e.status === request.status)
    .filter((e) => request.before === null || e.eventId < request.before)
    .sort((a, b) => (a.eventId < b.eventId ? 1 : -1))
    .slice(0, request.limit)
    .map(clone);
}
