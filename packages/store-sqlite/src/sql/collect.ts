import { type CollectRequest, type CollectResult, isExpiredRun, runIdCutoff } from '@docket/core/store';
import type { SqliteContext } from '../context.js';
import { countMove } from './run-counts.js';
import type { Statements } from './statements.js';

/**
 * `Store.collect`: deletes what retention allows. Candidates are scanned by run id up to `runIdCutoff`, in the
 * group's transaction.
 */
export function collect(ctx: SqliteContext, request: CollectRequest): Promise<CollectResult> {
  return ctx.write('operator.maintenance.collect', ({ s }) => collectInTransaction(s, request));
}

function collectInTransaction(s: Statements, request: CollectRequest): CollectResult {
  const cutoff = runIdCutoff(request.runsBefore);
  const rows = s.selectCollectable.all(request.namespace, request.after ?? '', cutoff, request.limit);
  const counts = { runs: 0, events: 0, deadLetters: 0 };
  for (const row of rows) {
    if (!isExpiredRun(row.status, row.updated_at, request.runsBefore)) continue;
    if ((s.countUnsettled.get(row.run_id)?.n ?? 0) > 0) continue;
    counts.events += s.deleteDeliveredOfRun.run(row.run_id).changes;
    s.deleteHistory.run(row.run_id);
    s.deleteRun.run(row.run_id);
    countMove(s, row.namespace, row.task_name, row.task_version, row.status, null);
    counts.runs++;
  }
  counts.events += s.deleteDelivered.run(request.namespace, request.runsBefore).changes;
  counts.deadLetters += s.deleteDeadLetters.run(request.namespace, request.deadLettersBefore).changes;
  s.deleteCommands.run(request.namespace, request.runsBefore);
  s.deleteSettledMinutes.run(request.namespace, request.runsBefore);
  const next = rows.length === request.limit ? (rows.at(-1)?.run_id ?? null) : null;
  return { ...counts, next };
}
