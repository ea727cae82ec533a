import {
  type CallbackEventRecord,
  type CallbackEventSelectRequest,
  type EventPlan,
  type EventRow,
  type ListCallbackEventsRequest,
  rowToEvent,
} from '@docket/core/store';
import type Database from 'better-sqlite3';
import { BOUND_LIMIT } from '../bound-limit.js';
import type { SqliteContext } from '../context.js';
import { NEWEST_ID, type Statements } from '../statements.js';
import { writeEvent } from '../writes/callback-event-writes.js';

/** The statements `callbackEventStatements` prepares. */
export interface CallbackEventStatements {
  selectDueEvents: Database.Statement<[string, number, number], EventRow>;
  selectAbandonedEvents: Database.Statement<[string, number, number], EventRow>;
  listCallbackEvents: Database.Statement<[string, string, string, number], EventRow>;
}

/** The callback events' own statements, prepared once per connection. */
export function callbackEventStatements(db: Database.Database): CallbackEventStatements {
  return {
    /** Due pending or retrying events of a namespace, earliest first. */
    // Only a run's earliest unsettled event (by sequence): a run's events are delivered one at a time, in order.
    selectDueEvents: db.prepare<[string, number, number], EventRow>(
      `SELECT * FROM docket_events AS e INDEXED BY docket_events_due
       WHERE namespace = ? AND status IN ('pending', 'retrying') AND due_at <= ?
       AND NOT EXISTS (SELECT 1 FROM docket_events AS p INDEXED BY docket_events_run WHERE p.run_id = e.run_id
         AND p.status IN ('pending', 'retrying', 'delivering') AND p.sequence < e.sequence)
       ORDER BY due_at ${BOUND_LIMIT}`,
    ),
    /** Deliveries whose lease expired. */
    selectAbandonedEvents: db.prepare<[string, number, number], EventRow>(
      `SELECT * FROM docket_events INDEXED BY docket_events_due
       WHERE namespace = ? AND status = 'delivering' AND lease_expires_at <= ? ORDER BY due_at ${BOUND_LIMIT}`,
    ),
    /** Events of a status, newest first below a cursor. */
    listCallbackEvents: db.prepare<[string, string, string, number], EventRow>(
      'SELECT * FROM docket_events WHERE namespace = ? AND status = ? AND event_id < ? ORDER BY event_id DESC LIMIT ?',
    ),
  };
}

/** Selects due and abandoned callback events of the given tasks and kinds, and writes core's claim for each. */
function claimInTransaction(s: Statements, request: CallbackEventSelectRequest): CallbackEventRecord[] {
  const wanted = (event: CallbackEventRecord) =>
    request.tasks.some(
      (t) => t.name === event.taskName && t.version === event.taskVersion && t.kinds.includes(event.kind),
    );
  const rows = [
    ...s.callbackEvents.selectDueEvents.all(request.namespace, request.now, request.limit * 4),
    ...s.callbackEvents.selectAbandonedEvents.all(request.namespace, request.now, request.limit),
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

/** `Store.claimCallbackEvents`: due and abandoned events of the wanted tasks and kinds, claimed in the batch's transaction. */
export function claimCallbackEvents(
  ctx: SqliteContext,
  request: CallbackEventSelectRequest,
): Promise<CallbackEventRecord[]> {
  return ctx.write('store.claimCallbackEvents', ({ s }) => claimInTransaction(s, request));
}

/** `Store.transactCallbackEvent`. */
export function transactCallbackEvent<T>(
  ctx: SqliteContext,
  namespace: string,
  eventId: string,
  plan: EventPlan<T>,
): Promise<T> {
  return ctx.write('store.transactCallbackEvent', ({ s }) => transactInTransaction(s, namespace, eventId, plan));
}

/** `Store.listCallbackEvents`: events in one status, newest first, below a cursor. */
export function listCallbackEvents(
  ctx: SqliteContext,
  request: ListCallbackEventsRequest,
): Promise<CallbackEventRecord[]> {
  return ctx.read('store.listCallbackEvents', ({ s }) =>
    s.callbackEvents.listCallbackEvents
      .all(request.namespace, request.status, request.before ?? NEWEST_ID, request.limit)
      .map(rowToEvent),
  );
}
