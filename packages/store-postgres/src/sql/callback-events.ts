import {
  type CallbackEventRecord,
  type CallbackEventSelectRequest,
  type EventPlan,
  type EventRow,
  type ListCallbackEventsRequest,
  rowToEvent,
} from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PgContext } from '../context.js';
import { writeEvent } from '../writes/callback-event-writes.js';
import { rowsOf } from '../writes/run-writes.js';

/** `Store.claimCallbackEvents`: due or abandoned events of the wanted tasks and kinds, locked, planned and written. */
export function claimCallbackEvents(
  ctx: PgContext,
  request: CallbackEventSelectRequest,
): Promise<CallbackEventRecord[]> {
  return ctx.inTransaction('store.claimCallbackEvents', async (tx) => {
    const due = await rowsOf<EventRow>(
      tx,
      sql`SELECT * FROM ${ctx.q.events} e WHERE namespace = ${request.namespace}
          AND ((status IN ('pending', 'retrying') AND due_at <= ${request.now})
            OR (status = 'delivering' AND lease_expires_at <= ${request.now}))
          AND NOT EXISTS (SELECT 1 FROM ${ctx.q.events} p WHERE p.run_id = e.run_id
            AND p.status IN ('pending', 'retrying', 'delivering') AND p.sequence < e.sequence)
          ORDER BY due_at LIMIT ${request.limit * 4} FOR UPDATE SKIP LOCKED`,
    );
    const written: CallbackEventRecord[] = [];
    for (const row of due) {
      if (written.length >= request.limit) break;
      const event = rowToEvent(row);
      const wanted = request.tasks.some(
        (t) => t.name === event.taskName && t.version === event.taskVersion && t.kinds.includes(event.kind),
      );
      if (!wanted) continue;
      const next = request.plan(event);
      if (next === null) continue;
      await writeEvent(ctx, tx, event, next);
      written.push(next);
    }
    return written;
  });
}

/** `Store.transactCallbackEvent`: one event locked, core's plan, its write. */
export function transactCallbackEvent<T>(
  ctx: PgContext,
  namespace: string,
  eventId: string,
  plan: EventPlan<T>,
): Promise<T> {
  return ctx.inTransaction('store.transactCallbackEvent', async (tx) => {
    const found = await rowsOf<EventRow>(
      tx,
      sql`SELECT * FROM ${ctx.q.events} WHERE namespace = ${namespace} AND event_id = ${eventId} FOR UPDATE`,
    );
    const current = found[0] ? rowToEvent(found[0]) : null;
    const { write, value } = plan(current);
    if (write !== null) {
      if (current === null) throw new Error('internal: write for a missing event');
      await writeEvent(ctx, tx, current, write);
    }
    return value;
  });
}

/** `Store.listCallbackEvents`: events in one status, newest first, below a cursor. */
export async function listCallbackEvents(
  ctx: PgContext,
  request: ListCallbackEventsRequest,
): Promise<CallbackEventRecord[]> {
  const below = request.before === null ? sql`` : sql` AND event_id < ${request.before}`;
  const found = await rowsOf<EventRow>(
    ctx.live(),
    sql`SELECT * FROM ${ctx.q.events} WHERE namespace = ${request.namespace} AND status = ${request.status}${below}
        ORDER BY event_id DESC LIMIT ${request.limit}`,
  );
  return found.map(rowToEvent);
}
