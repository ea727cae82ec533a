import type { RunRecord, RunRow, SelectRequest, TaskKey } from '@docket/core/store';
import { claimRankOfRow, compareClaimOrder, RUN_COLUMNS, rowToRun, runRowOf } from '@docket/core/store';
import type Database from 'better-sqlite3';
import type { SqliteContext } from '../context.js';
import type { Statements } from '../statements.js';
import { applyWrite } from '../writes/run-writes.js';

/** The statements `claimStatements` prepares. */
export interface ClaimStatements {
  selectBandBelow: Database.Statement<[string, string, string, number], { priority: number }>;
  selectClaimable: Database.Statement<[string, string, string, number, number, number], unknown[]>;
  selectExpired: Database.Statement<[string, number, number], unknown[]>;
  selectNextDue: Database.Statement<[string, string, string, number], { due: number | null }>;
}

/**
 * The claim's statements, prepared once per connection. `CLAIMABLE` (core's `machine/claimable.ts`) in SQL: the
 * claim due time is the `claim_due_at` column (NULL while not claimable), and `docket_runs_claim_priority` keeps each
 * task's claimable runs by priority, then by that time.
 */
export function claimStatements(db: Database.Database): ClaimStatements {
  const runColumns = RUN_COLUMNS.join(', ');
  return {
    /** The highest priority below the given one that a task has claimable runs of (due or not). */
    selectBandBelow: db.prepare<[string, string, string, number], { priority: number }>(
      `SELECT priority FROM docket_runs INDEXED BY docket_runs_claim_priority
       WHERE namespace = ? AND task_name = ? AND task_version = ? AND priority < ? AND claim_due_at IS NOT NULL
       ORDER BY priority DESC LIMIT 1`,
    ),
    /** Due runs of one task and priority, as values in `RUN_COLUMNS` order (raw: see `runRowOf`). */
    selectClaimable: db
      .prepare<[string, string, string, number, number, number], unknown[]>(
        `SELECT ${runColumns} FROM docket_runs INDEXED BY docket_runs_claim_priority
         WHERE namespace = ? AND task_name = ? AND task_version = ? AND priority = ? AND claim_due_at IS NOT NULL
         AND claim_due_at <= ? ORDER BY claim_due_at LIMIT ?`,
      )
      .raw(true),
    /** Runs whose lease expired, as values in `RUN_COLUMNS` order. */
    selectExpired: db
      .prepare<[string, number, number], unknown[]>(
        `SELECT ${runColumns} FROM docket_runs INDEXED BY docket_runs_lease
         WHERE namespace = ? AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?
         ORDER BY lease_expires_at LIMIT ?`,
      )
      .raw(true),
    /** The earliest claim due time of one task and priority. */
    selectNextDue: db.prepare<[string, string, string, number], { due: number | null }>(
      `SELECT min(claim_due_at) AS due FROM docket_runs INDEXED BY docket_runs_claim_priority
       WHERE namespace = ? AND task_name = ? AND task_version = ? AND priority = ? AND claim_due_at IS NOT NULL`,
    ),
  };
}

/**
 * `Store.claimDue` (and, with `expired`, `recoverExpired`): the due runs of each task (or the expired leases) by
 * index, highest priority first and earliest due first within a priority, each planned by core and written in the
 * batch's transaction.
 */
export async function claim(ctx: SqliteContext, request: SelectRequest, expired: boolean): Promise<RunRecord[]> {
  const written = await ctx.write(expired ? 'store.recoverExpired' : 'store.claimDue', ({ s }) => {
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
  for (const run of written) ctx.known.committed(run);
  return written;
}

function candidates(s: Statements, request: SelectRequest, expired: boolean): RunRow[] {
  if (expired) return s.claim.selectExpired.all(request.namespace, request.now, request.limit).map(runRowOf);
  let rows: RunRow[] = [];
  for (const task of request.tasks) rows.push(...dueOfTask(s, request, task));
  if (request.tasks.length > 1) {
    rows.sort((a, b) => compareClaimOrder(claimRankOfRow(a), claimRankOfRow(b)));
    rows = rows.slice(0, request.limit);
  }
  return rows;
}

/** Above every priority a run can have (-1000..1000). */
const ABOVE_ALL = 1001;

/**
 * One task's due runs, highest priority first: one index seek finds each priority the task has claimable runs of,
 * one range scan reads that priority's due runs in due order. The cost grows with the number of priorities in use,
 * not with the number of runs waiting for a later time.
 */
function dueOfTask(s: Statements, request: SelectRequest, task: TaskKey): RunRow[] {
  const rows: RunRow[] = [];
  let band = ABOVE_ALL;
  while (rows.length < request.limit) {
    const next = s.claim.selectBandBelow.get(request.namespace, task.name, task.version, band);
    if (next === undefined) break;
    band = next.priority;
    const left = request.limit - rows.length;
    for (const values of s.claim.selectClaimable.all(
      request.namespace,
      task.name,
      task.version,
      band,
      request.now,
      left,
    )) {
      rows.push(runRowOf(values));
    }
  }
  return rows;
}

/** `Store.nextDueAt`: the earliest due time among claimable runs of the given tasks, whatever their priority. */
export function nextDueAt(ctx: SqliteContext, namespace: string, tasks: readonly TaskKey[]): Promise<number | null> {
  return ctx.read('store.nextDueAt', ({ s }) => {
    let earliest: number | null = null;
    for (const task of tasks) {
      for (let band = ABOVE_ALL; ; ) {
        const next = s.claim.selectBandBelow.get(namespace, task.name, task.version, band);
        if (next === undefined) break;
        band = next.priority;
        const due = s.claim.selectNextDue.get(namespace, task.name, task.version, band)?.due ?? null;
        if (due !== null && (earliest === null || due < earliest)) earliest = due;
      }
    }
    return earliest;
  });
}
