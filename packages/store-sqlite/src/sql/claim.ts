import type { RunRecord, RunRow, SelectRequest, TaskFlowState, TaskKey } from '@docket/core/store';
import {
  flowCandidates,
  flowStateOf,
  holdsLeaseAfter,
  mergeCandidates,
  needsFlow,
  RUN_COLUMNS,
  recordFlowClaims,
  runRowOf,
  tasksByName,
} from '@docket/core/store';
import type Database from 'better-sqlite3';
import { BOUND_LIMIT } from '../bound-limit.js';
import type { SqliteContext } from '../context.js';
import { selectTask, sqliteFlowReader, sqliteFlowRecorder } from '../flow/flow.js';
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
         AND claim_due_at <= ? ORDER BY claim_due_at ${BOUND_LIMIT}`,
      )
      .raw(true),
    /** Runs whose lease expired, as values in `RUN_COLUMNS` order. */
    selectExpired: db
      .prepare<[string, number, number], unknown[]>(
        `SELECT ${runColumns} FROM docket_runs INDEXED BY docket_runs_lease
         WHERE namespace = ? AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?
         ORDER BY lease_expires_at ${BOUND_LIMIT}`,
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
 * index, highest priority first and earliest due first within a priority, within what each task's flow control
 * allows (`sql/flow.ts`), each planned by core and written in the batch's transaction with the claims its rates count.
 */
export async function claim(ctx: SqliteContext, request: SelectRequest, expired: boolean): Promise<RunRecord[]> {
  const written = await ctx.write(expired ? 'store.recoverExpired' : 'store.claimDue', ({ s }) => {
    if (expired) {
      const rows = s.claim.selectExpired.all(request.namespace, request.now, request.limit);
      return planAndWrite(
        s,
        request,
        rows.map((values) => s.runOf(runRowOf(values))),
      );
    }
    const flowing = new Map<string, TaskFlowState>();
    const written = planAndWrite(s, request, dueCandidates(s, request, flowing));
    const recorder = sqliteFlowRecorder(s, request.namespace);
    for (const [name, state] of flowing) {
      const claimed = written.filter((run) => run.taskName === name && holdsLeaseAfter(run));
      recordFlowClaims(recorder, state, name, claimed, request.now);
    }
    return written;
  });
  for (const run of written) ctx.known.committed(run);
  return written;
}

/** Hands each candidate to core's plan and writes what it decides. */
function planAndWrite(s: Statements, request: SelectRequest, runs: readonly RunRecord[]): RunRecord[] {
  const written: RunRecord[] = [];
  for (const run of runs) {
    const write = request.plan(run);
    if (write === null) continue;
    applyWrite(s, run, write);
    written.push(write.run);
  }
  return written;
}

/**
 * The due runs of the request's tasks in the claim order: by index for a task without flow control, else what
 * `flowCandidates` allows (the tasks that went through it are added to `flowing`).
 */
function dueCandidates(s: Statements, request: SelectRequest, flowing: Map<string, TaskFlowState>): RunRecord[] {
  const { namespace, now, limit } = request;
  const dueOfVersion = (name: string, version: string, left: number) =>
    dueOfTask(s, request, { name, version }, left).map((row) => s.runOf(row));
  const reader = sqliteFlowReader(s, namespace, now, dueOfVersion);
  let runs: RunRecord[] = [];
  for (const [name, versions] of tasksByName(request.tasks)) {
    const state = flowStateOf(selectTask(s, namespace, name));
    if (state !== null && needsFlow(state, now)) {
      flowing.set(name, state);
      let due = flowCandidates(reader, state, name, versions, request);
      // A short claim from a kept list of groups lists them again: a group may have got due runs since.
      if (due.length < limit && reader.keptGroups(name)) {
        s.groupLists.forget(namespace, name);
        due = flowCandidates(reader, state, name, versions, request);
      }
      runs.push(...due);
    } else {
      for (const version of versions) runs.push(...dueOfVersion(name, version, limit));
    }
  }
  if (request.tasks.length > 1) runs = mergeCandidates(runs, limit);
  return runs;
}

/** Above every priority a run can have (-1000..1000). */
const ABOVE_ALL = 1001;

/**
 * One task's due runs, highest priority first: one index seek finds each priority the task has claimable runs of,
 * one range scan reads that priority's due runs in due order. The cost grows with the number of priorities in use,
 * not with the number of runs waiting for a later time.
 */
function dueOfTask(s: Statements, request: SelectRequest, task: TaskKey, limit: number): RunRow[] {
  const rows: RunRow[] = [];
  let band = ABOVE_ALL;
  while (rows.length < limit) {
    const next = s.claim.selectBandBelow.get(request.namespace, task.name, task.version, band);
    if (next === undefined) break;
    band = next.priority;
    const left = limit - rows.length;
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
