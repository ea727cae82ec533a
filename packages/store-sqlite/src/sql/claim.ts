import type { RunRecord, RunRow, SelectRequest, TaskKey } from '@docket/core/store';
import { rowToRun } from '@docket/core/store';
import type { SqliteContext } from '../context.js';
import { applyWrite } from './settle.js';
import type { Statements } from './statements.js';

/**
 * `Store.claimDue` (and, with `expired`, `recoverExpired`): the due runs of each task (or the expired leases) by
 * index, earliest due first, each planned by core and written in the group's transaction.
 */
export function claim(ctx: SqliteContext, request: SelectRequest, expired: boolean): Promise<RunRecord[]> {
  return ctx.write(expired ? 'store.recoverExpired' : 'store.claimDue', ({ s }) => {
    const written: RunRecord[] = [];
    for (const row of candidates(s, request, expired)) {
      const run = rowToRun(row);
      const write = request.plan(run);
      if (write === null) continue;
      applyWrite(s, run, write);
      written.push(write.run);
    }
    return written;
  });
}

function candidates(s: Statements, request: SelectRequest, expired: boolean): RunRow[] {
  if (expired) return s.selectExpired.all(request.namespace, request.now, request.limit);
  let rows: RunRow[] = [];
  for (const task of request.tasks) {
    rows.push(...s.selectClaimable.all(request.namespace, task.name, task.version, request.now, request.limit));
  }
  if (request.tasks.length > 1) {
    rows.sort((a, b) => (a.claim_due_at ?? 0) - (b.claim_due_at ?? 0) || a.created_at - b.created_at);
    rows = rows.slice(0, request.limit);
  }
  return rows;
}

/** `Store.nextDueAt`: the earliest due time among claimable runs of the given tasks. */
export function nextDueAt(ctx: SqliteContext, namespace: string, tasks: readonly TaskKey[]): Promise<number | null> {
  return ctx.read('store.nextDueAt', ({ s }) => {
    let earliest: number | null = null;
    for (const task of tasks) {
      const due = s.selectNextDue.get(namespace, task.name, task.version)?.due ?? null;
      if (due !== null && (earliest === null || due < earliest)) earliest = due;
    }
    return earliest;
  });
}
