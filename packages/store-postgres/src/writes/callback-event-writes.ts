import { type CallbackEventRecord, checkEventWrite, EVENT_COLUMNS, eventParams } from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PgContext } from '../context.js';
import { type Executor, rowsOf } from './run-writes.js';

/** Writes an event's next version if it is still at `current`'s revision, and wakes callback workers when it is due. */
export async function writeEvent(
  ctx: PgContext,
  tx: Executor,
  current: CallbackEventRecord,
  next: CallbackEventRecord,
): Promise<void> {
  checkEventWrite(current, next);
  const row = eventParams(next) as unknown as Record<string, unknown>;
  const sets = sql.join(
    EVENT_COLUMNS.filter((c) => c !== 'event_id').map((c) => sql`${sql.raw(`"${c}"`)} = ${row[c] ?? null}`),
    sql`, `,
  );
  const updated = await rowsOf(
    tx,
    sql`UPDATE ${ctx.q.events} SET ${sets} WHERE event_id = ${current.eventId} AND revision = ${current.revision} RETURNING event_id`,
  );
  if (updated.length !== 1) throw new Error(`internal: event ${current.eventId} moved during its transaction`);
  if (next.status === 'pending' || next.status === 'retrying') {
    await tx.execute(sql`SELECT pg_notify(${ctx.channel}, ${next.namespace})`);
  }
}
