import type { RunRow } from '@docket/core/store';
import {
  type CollectRequest,
  type CollectResult,
  flowClaimsCollectedBefore,
  isExpiredRun,
  runIdCutoff,
} from '@docket/core/store';
import type Database from 'better-sqlite3';
import type { SqliteContext } from '../context.js';
import type { Statements } from '../statements.js';
import { countMove } from '../writes/run-counts.js';

/** The statements `collectStatements` prepares. */
export interface CollectStatements {
  selectCollectable: Database.Statement<[string, string, string, number], RunRow>;
  countUnsettled: Database.Statement<[string], { n: number }>;
  deleteRun: Database.Statement<[string]>;
  deleteHistory: Database.Statement<[string]>;
  deleteDeliveredOfRun: Database.Statement<[string]>;
  deleteDelivered: Database.Statement<[string, number]>;
  deleteDeadLetters: Database.Statement<[string, number]>;
  deleteCommands: Database.Statement<[string, number]>;
  deleteSettledMinutes: Database.Statement<[string, number]>;
  deleteIdleGroups: Database.Statement<[string, number]>;
  deleteOldFlowClaims: Database.Statement<[string, number]>;
}

/** Retention's statements, prepared once per connection. */
export function collectStatements(db: Database.Database): CollectStatements {
  return {
    // Run ids start with their creation time, so a run last changed before the cutoff was created before it too:
    // the scan walks the primary key up to the cutoff's id prefix instead of needing an index of its own.
    selectCollectable: db.prepare<[string, string, string, number], RunRow>(
      'SELECT * FROM docket_runs WHERE namespace = ? AND run_id > ? AND run_id < ? ORDER BY run_id LIMIT ?',
    ),
    countUnsettled: db.prepare<[string], { n: number }>(
      "SELECT count(*) AS n FROM docket_events WHERE run_id = ? AND status IN ('pending', 'retrying', 'delivering')",
    ),
    deleteRun: db.prepare<[string]>('DELETE FROM docket_runs WHERE run_id = ?'),
    deleteHistory: db.prepare<[string]>('DELETE FROM docket_history WHERE run_id = ?'),
    deleteDeliveredOfRun: db.prepare<[string]>("DELETE FROM docket_events WHERE run_id = ? AND status = 'delivered'"),
    deleteDelivered: db.prepare<[string, number]>(
      "DELETE FROM docket_events WHERE namespace = ? AND status = 'delivered' AND delivered_at < ?",
    ),
    deleteDeadLetters: db.prepare<[string, number]>(
      "DELETE FROM docket_events WHERE namespace = ? AND status = 'dead_letter' AND dead_at < ?",
    ),
    deleteCommands: db.prepare<[string, number]>('DELETE FROM docket_commands WHERE namespace = ? AND created_at < ?'),
    /** Deletes a namespace's settled-per-minute counts before a time. */
    deleteSettledMinutes: db.prepare<[string, number]>(
      'DELETE FROM docket_settled_minutes WHERE namespace = ? AND minute < ?',
    ),
    // A group's row keeps its last claim (the order of groups in turn) and its hold: one neither claimed nor held since
    // retention's cutoff orders as a group never claimed, so its row goes (a group key per tenant adds up over time).
    deleteIdleGroups: db.prepare<[string, number]>(
      'DELETE FROM docket_flow_groups WHERE namespace = ? AND max(coalesce(last_claimed_at, 0), coalesce(hold_until, 0)) < ?',
    ),
    // Claims no rate counts any longer (`flowClaimsCollectedBefore`), whatever rate their task has now.
    deleteOldFlowClaims: db.prepare<[string, number]>('DELETE FROM docket_flow_claims WHERE namespace = ? AND at < ?'),
  };
}

/**
 * `Store.collect`: deletes what retention allows. Candidates are scanned by run id up to `runIdCutoff`, in the
 * batch's transaction.
 */
export function collect(ctx: SqliteContext, request: CollectRequest): Promise<CollectResult> {
  return ctx.write('operator.maintenance.collect', ({ s }) => collectInTransaction(s, request));
}

function collectInTransaction(s: Statements, request: CollectRequest): CollectResult {
  const cutoff = runIdCutoff(request.runsBefore);
  const rows = s.collect.selectCollectable.all(request.namespace, request.after ?? '', cutoff, request.limit);
  const counts = { runs: 0, events: 0, deadLetters: 0 };
  for (const row of rows) {
    if (!isExpiredRun(row.status, row.updated_at, request.runsBefore)) continue;
    if ((s.collect.countUnsettled.get(row.run_id)?.n ?? 0) > 0) continue;
    counts.events += s.collect.deleteDeliveredOfRun.run(row.run_id).changes;
    s.collect.deleteHistory.run(row.run_id);
    s.collect.deleteRun.run(row.run_id);
    countMove(s, row.namespace, row.task_name, row.task_version, row.status, null);
    counts.runs++;
  }
  counts.events += s.collect.deleteDelivered.run(request.namespace, request.runsBefore).changes;
  counts.deadLetters += s.collect.deleteDeadLetters.run(request.namespace, request.deadLettersBefore).changes;
  s.collect.deleteCommands.run(request.namespace, request.runsBefore);
  s.collect.deleteSettledMinutes.run(request.namespace, request.runsBefore);
  // Once per pass over the runs (its first call): these statements read all of the namespace's groups and claims.
  if (request.after === null) {
    s.collect.deleteIdleGroups.run(request.namespace, request.runsBefore);
    s.collect.deleteOldFlowClaims.run(request.namespace, flowClaimsCollectedBefore(request.runsBefore));
  }
  const next = rows.length === request.limit ? (rows.at(-1)?.run_id ?? null) : null;
  return { ...counts, next };
}
