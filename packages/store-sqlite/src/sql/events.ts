import {
  type CallbackEventRecord,
  checkEventWrite,
  type EventPlan,
  type EventSelectRequest,
  eventParams,
  type ListEventsRequest,
  rowToEvent,
} from '@docket/core/store';
import type { SqliteContext } from '../context.js';
import { NEWEST } from './reads.js';
import type { Statements } from './statements.js';

/** Writes an event row if its stored revision is still `current`'s. */
export function writeEvent(s: Statements, current: CallbackEventRecord, next: CallbackEventRecord): void {
  checkEventWrite(current, next);
  const changed = s.updateEvent.run({ ...eventParams(next), expected_revision: current.revision }).changes;
  if (changed !== 1) throw new Error(`internal: event ${current.eventId} moved during its transaction`);
}

/** Selects due and abandoned callback events of the given tasks and kinds, and writes core's claim for each. */
function claimInTransaction(s: Statements, request: EventSelectRequest): CallbackEventRecord[] {
  const wanted = (event: CallbackEventRecord) =>
    request.tasks.some(
      (t) => t.name === event.taskName && t.version === event.taskVersion && t.kinds.includes(event.kind),
    );
  const rows = [
    ...s.selectDueEvents.all(request.namespace, request.now, request.limit * 4),
    ...s.selectAbandonedEvents.all(request.namespace, request.now, request.limit),
  ];
  const written: CallbackEventRecord[] = [];
  for (const row of rows) {
    if (written.length >= request.limit) break;
    const event = rowToEvent(row);
    if (!wanted(event)) continue;
    const next = request.plan(event);
    if (next === null) continue;
    writeEvent(s, event, next);
    written.push(next);
  }
  return written;
}

/** Runs core's plan for one event and writes what it returns. */
function transactInTransaction<T>(s: Statements, namespace: string, eventId: string, plan: EventPlan<T>): T {
  const row = s.selectEvent.get(namespace, eventId);
  const current = row ? rowToEvent(row) : null;
  const { write, value } = plan(current);
  if (write !== null) {
    if (current === null) throw new Error('internal: write for a missing event');
    writeEvent(s, current, write);
  }
  return value;
}

/** `Store.claimEvents`: due and abandoned events of the wanted tasks and kinds, claimed in the group's transaction. */
export function claimEvents(ctx: SqliteContext, request: EventSelectRequest): Promise<CallbackEventRecord[]> {
  return ctx.write('store.claimEvents', ({ s }) => claimInTransaction(s, request));
}

/** `Store.transactEvent`. */
export function transactEvent<T>(
  ctx: SqliteContext,
  namespace: string,
  eventId: string,
  plan: EventPlan<T>,
): Promise<T> {
  return ctx.write('store.transactEvent', ({ s }) => transactInTransaction(s, namespace, eventId, plan));
}

/** `Store.listEvents`: events in one status, newest first, below a cursor. */
export function listEvents(ctx: SqliteContext, request: ListEventsRequest): Promise<CallbackEventRecord[]> {
  return ctx.read('store.listEvents', ({ s }) =>
    s.listEvents.all(request.namespace, request.status, request.before ?? NEWEST, request.limit).map(rowToEvent),
  );
}
