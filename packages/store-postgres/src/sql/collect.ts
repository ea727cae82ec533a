import {
  type CollectRequest,
  type CollectResult,
  flowClaimsCollectedBefore,
  isExpiredRun,
  type RunRow,
  runIdCutoff,
} from '@docket/core/store';
import { sql } from 'drizzle-orm';
import { WAIT_BOUND_MS, within } from '../bounded-wait.js';
import type { PgContext } from '../context.js';
import { rowsOf } from '../writes/run-writes.js';

/**
 * `Store.collect`: deletes terminal runs older than retention whose callbacks are settled (with their history and
 * delivered events), delivered events and dead letters past retention, old command receipts and settle counts,
 * flow groups idle since retention's cutoff, and flow claims no rate counts any longer.
 */
export async function collect(ctx: PgContext, request: CollectRequest): Promise<CollectResult> {
  const { runs, history, events, commands } = ctx.q;
  // A claim answers its runs before its held transaction commits (with the groups it claimed from): collect reads
  // once this store's claims have ended, so it sees what they wrote.
  await within(
    ctx.held.allEnded().then(() => true),
    WAIT_BOUND_MS,
  );
  return ctx.inTransaction('operator.maintenance.collect', async (tx) => {
    const cutoff = runIdCutoff(request.runsBefore);
    const candidates = await rowsOf<RunRow>(
      tx,
      sql`SELECT * FROM ${runs} WHERE namespace = ${request.namespace} AND run_id > ${request.after ?? ''}
          AND run_id < ${cutoff} ORDER BY run_id LIMIT ${request.limit} FOR UPDATE SKIP LOCKED`,
    );
    const counts = { runs: 0, events: 0, deadLetters: 0 };
    for (const row of candidates) {
      if (!isExpiredRun(row.status, Number(row.updated_at), request.runsBefore)) continue;
      const [unsettled] = await rowsOf<{ n: string | number }>(
        tx,
        sql`SELECT count(*) AS n FROM ${events} WHERE run_id = ${row.run_id} AND status IN ('pending', 'retrying', 'delivering')`,
      );
      if (Number(unsettled?.n ?? 0) > 0) continue;
      counts.events += (
        await rowsOf(
          tx,
          sql`DELETE FROM ${events} WHERE run_id = ${row.run_id} AND status = 'delivered' RETURNING event_id`,
        )
      ).length;
      await tx.execute(sql`DELETE FROM ${history} WHERE run_id = ${row.run_id}`);
      await tx.execute(sql`DELETE FROM ${runs} WHERE run_id = ${row.run_id}`);
      counts.runs++;
    }
    counts.events += (
      await rowsOf(
        tx,
        sql`DELETE FROM ${events} WHERE namespace = ${request.namespace} AND status = 'delivered' AND delivered_at < ${request.runsBefore} RETURNING event_id`,
      )
    ).length;
    counts.deadLetters += (
      await rowsOf(
        tx,
        sql`DELETE FROM ${events} WHERE namespace = ${request.namespace} AND status = 'dead_letter' AND dead_at < ${request.deadLettersBefore} RETURNING event_id`,
      )
    ).length;
    await tx.execute(
      sql`DELETE FROM ${commands} WHERE namespace = ${request.namespace} AND created_at < ${request.runsBefore}`,
    );
    await tx.execute(
      sql`DELETE FROM ${ctx.q.settledMinutes} WHERE namespace = ${request.namespace} AND minute < ${request.runsBefore}::double precision`,
    );
    // Once per pass over the runs (its first call): groups neither claimed nor held since retention's cutoff order as
    // groups never claimed, so their rows go (a group key per tenant adds up over time).
    if (request.after === null) {
      await tx.execute(
        sql`DELETE FROM ${sql.raw(ctx.tables.flowGroups)} WHERE namespace = ${request.namespace}
            AND greatest(last_claimed_at, hold_until, 0) < ${request.runsBefore}::double precision`,
      );
      // Claims no rate counts any longer (`flowClaimsCollectedBefore`), whatever rate their task has now.
      await tx.execute(
        sql`DELETE FROM ${sql.raw(ctx.tables.flowClaims)} WHERE namespace = ${request.namespace}
            AND at < ${flowClaimsCollectedBefore(request.runsBefore)}::double precision`,
      );
    }
    const next = candidates.length === request.limit ? (candidates.at(-1)?.run_id ?? null) : null;
    return { ...counts, next };
  });
}
