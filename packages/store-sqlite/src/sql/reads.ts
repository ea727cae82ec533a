import type { CallbackCounts, HistoryEntry, RunStatus } from '@docket/core';
import {
  CHILD_COLUMNS,
  type ChildRecord,
  type ChildRow,
  countCallbacks,
  countCallbacksByRun,
  type HistoryRow,
  keyPrefixEnd,
  type ListChildrenRequest,
  type ListedRun,
  type ListRunsRequest,
  listedColumns,
  listedRunOf,
  RUN_COLUMNS,
  type RunRecord,
  type RunStatsAnswer,
  type RunStatsRequest,
  rowToChild,
  rowToHistory,
  type SettledMinute,
  type SettledRequest,
} from '@docket/core/store';
import type Database from 'better-sqlite3';
import type { SqliteContext } from '../context.js';
import { NEWEST_ID } from '../statements.js';

/** The named parameters of the `runStats` statements. */
export interface StatsParams {
  namespace: string;
  task: string | null;
  now: number;
}

/** The statements `readStatements` prepares. */
export interface ReadStatements {
  selectHistory: Database.Statement<[string], HistoryRow>;
  countEvents: Database.Statement<[string, string], { status: string; n: number }>;
  countEventsOf: Database.Statement<[string, string], { run_id: string; status: string; n: number }>;
  statsCounts: Database.Statement<
    [StatsParams],
    { task_name: string; task_version: string; status: string; n: number }
  >;
  statsDeadLetters: Database.Statement<[StatsParams], { n: number }>;
  statsOldestDue: Database.Statement<[StatsParams], { due: number | null }>;
  settledMinutes: Database.Statement<[string, number], { minute: number; n: number }>;
  /** `listRuns`: each run's values in `listedColumns` order (raw: see `listedRunOf`). */
  listRuns: (request: ListRunsRequest & { before: string }) => unknown[][];
  /** `listChildren`: one page's children in id order (`namespace`, `parent_run_id`, `parent_page`), `CHILD_COLUMNS`. */
  listChildren: Database.Statement<[string, string, number], ChildRow>;
  /** The children of a parent that are not terminal, in id order: the cancel cascade's rows. */
  unsettledChildren: Database.Statement<[string, string], unknown[]>;
  /** The family walk's count step (`CountedParent`): `by`, `now`, `namespace`, `run_id`; answers the parent after it. */
  countChildren: Database.Statement<[number, number, string, string], { status: string; children: string }>;
}

/** The reads' statements, prepared once per connection; every one on a hot path is served by an index. */
export function readStatements(db: Database.Database): ReadStatements {
  // Parked and finished runs from the counts the store keeps (`../writes/run-counts.ts`); pending and retrying runs
  // from the claim index, running and pausing ones from the lease index: both as small as the runs not finished.
  const task = '(@task IS NULL OR task_name = @task)';
  return {
    selectHistory: db.prepare<[string], HistoryRow>('SELECT * FROM docket_history WHERE run_id = ? ORDER BY seq'),
    countEvents: db.prepare<[string, string], { status: string; n: number }>(
      'SELECT status, count(*) AS n FROM docket_events WHERE run_id = ? AND namespace = ? GROUP BY status',
    ),
    /** `callbackCountsOf`: events by run and status of the runs in a JSON array of ids. */
    countEventsOf: db.prepare<[string, string], { run_id: string; status: string; n: number }>(
      `SELECT run_id, status, count(*) AS n FROM docket_events
       WHERE run_id IN (SELECT value FROM json_each(?)) AND namespace = ? GROUP BY run_id, status`,
    ),
    /** `runStats`: the kept run counts and the unfinished runs by index (`@task`: a task or NULL). */
    statsCounts: db.prepare<[StatsParams], { task_name: string; task_version: string; status: string; n: number }>(
      `SELECT task_name, task_version, status, n FROM docket_run_counts WHERE namespace = @namespace AND ${task} AND n > 0
       UNION ALL
       SELECT task_name, task_version, status, count(*) FROM docket_runs INDEXED BY docket_runs_claim_priority
       WHERE namespace = @namespace AND ${task} AND claim_due_at IS NOT NULL AND status IN ('pending', 'retrying')
       GROUP BY task_name, task_version, status
       UNION ALL
       SELECT task_name, task_version, status, count(*) FROM docket_runs INDEXED BY docket_runs_lease
       WHERE namespace = @namespace AND ${task} AND lease_expires_at IS NOT NULL AND status IN ('running', 'pausing')
       GROUP BY task_name, task_version, status`,
    ),
    statsDeadLetters: db.prepare<[StatsParams], { n: number }>(
      `SELECT count(*) AS n FROM docket_events INDEXED BY docket_events_due
       WHERE namespace = @namespace AND status = 'dead_letter' AND ${task}`,
    ),
    statsOldestDue: db.prepare<[StatsParams], { due: number | null }>(
      `SELECT min(claim_due_at) AS due FROM docket_runs INDEXED BY docket_runs_claim_priority
       WHERE namespace = @namespace AND ${task} AND claim_due_at IS NOT NULL AND claim_due_at <= @now`,
    ),
    /** The runs settled per minute of a namespace from `since` on. */
    settledMinutes: db.prepare<[string, number], { minute: number; n: number }>(
      'SELECT minute, n FROM docket_settled_minutes WHERE namespace = ? AND minute >= ? ORDER BY minute',
    ),
    listRuns: runListing(db),
    listChildren: db.prepare<[string, string, number], ChildRow>(
      `SELECT ${CHILD_COLUMNS.join(', ')} FROM docket_runs INDEXED BY docket_runs_parent
       WHERE namespace = ? AND parent_run_id = ? AND parent_page = ? ORDER BY run_id`,
    ),
    unsettledChildren: db
      .prepare<[string, string], unknown[]>(
        `SELECT ${RUN_COLUMNS.join(', ')} FROM docket_runs INDEXED BY docket_runs_parent
         WHERE namespace = ? AND parent_run_id = ? AND status NOT IN ('success', 'failed', 'cancelled') ORDER BY run_id`,
      )
      .raw(true),
    countChildren: db.prepare(
      `UPDATE docket_runs
       SET children = json_set(children, '$.settled', min(children ->> '$.settled' + ?, children ->> '$.total')),
         updated_at = ?
       WHERE namespace = ? AND run_id = ? AND children IS NOT NULL AND children ->> '$.settled' < children ->> '$.total'
       RETURNING status, children`,
    ),
  };
}

/**
 * Lists runs newest first below `before`, filtered by task name, status, group and parent when given (raw rows; a
 * statement cached per filter).
 */
function runListing(db: Database.Database): ReadStatements['listRuns'] {
  const statements = new Map<string, Database.Statement>();
  return (request) => {
    const { taskName, status, group, parentRunId, idempotencyKey, idempotencyKeyPrefix: prefix, from } = request;
    const given = [
      taskName !== null,
      status !== null,
      group,
      parentRunId,
      idempotencyKey,
      prefix,
      from,
      request.payloads,
    ];
    const key = given.map((g) => g !== undefined && g !== false).join(':');
    let statement = statements.get(key);
    if (!statement) {
      const where = ['namespace = @namespace', 'run_id < @before'];
      if (taskName !== null) where.push('task_name = @task_name');
      if (status !== null) where.push('status = @status');
      if (group !== undefined) where.push('group_key = @group_key');
      if (parentRunId !== undefined) where.push('parent_run_id = @parent_run_id');
      if (idempotencyKey !== undefined) where.push('idempotency_key = @idempotency_key');
      if (prefix !== undefined) where.push('idempotency_key >= @key_from AND idempotency_key < @key_below');
      if (from !== undefined) where.push('run_id >= @from');
      const columns = listedColumns(request.payloads).join(', ');
      statement = db
        .prepare(`SELECT ${columns} FROM docket_runs WHERE ${where.join(' AND ')} ORDER BY run_id DESC LIMIT @limit`)
        .raw(true);
      statements.set(key, statement);
    }
    const params: Record<string, unknown> = {
      namespace: request.namespace,
      before: request.before,
      limit: request.limit,
    };
    if (taskName !== null) params.task_name = taskName;
    if (status !== null) params.status = status;
    if (group !== undefined) params.group_key = group;
    if (parentRunId !== undefined) params.parent_run_id = parentRunId;
    if (idempotencyKey !== undefined) params.idempotency_key = idempotencyKey;
    if (prefix !== undefined) Object.assign(params, { key_from: prefix, key_below: keyPrefixEnd(prefix) });
    if (from !== undefined) params.from = from;
    return statement.all(params) as unknown[][];
  };
}

/** `Store.getRun`. */
export function getRun(ctx: SqliteContext, namespace: string, runId: string): Promise<RunRecord | null> {
  return ctx.read(
    'store.getRun',
    ({ s }) => {
      const row = s.selectRun.get(namespace, runId);
      return row ? s.runOf(row) : null;
    },
    runId,
  );
}

/** `Store.getHistory`: a run's entries in `seq` order, none for a run of another namespace. */
export function getHistory(ctx: SqliteContext, namespace: string, runId: string): Promise<HistoryEntry[]> {
  return ctx.read(
    'store.getHistory',
    ({ s }) => (s.selectRun.get(namespace, runId) ? s.reads.selectHistory.all(runId).map(rowToHistory) : []),
    runId,
  );
}

/** `Store.callbackCounts`: a run's callback events, counted as `RunInfo.callbacks` shows them. */
export function callbackCounts(ctx: SqliteContext, namespace: string, runId: string): Promise<CallbackCounts> {
  return ctx.read('store.callbackCounts', ({ s }) => countCallbacks(s.reads.countEvents.all(runId, namespace)), runId);
}

/** `Store.callbackCountsOf`: one statement for a page of runs. */
export function callbackCountsOf(
  ctx: SqliteContext,
  namespace: string,
  runIds: readonly string[],
): Promise<CallbackCounts[]> {
  return ctx.read('store.callbackCountsOf', ({ s }) =>
    countCallbacksByRun(runIds, s.reads.countEventsOf.all(JSON.stringify(runIds), namespace)),
  );
}

/** `Store.runStats`: the counts the triggers keep, dead letters and the earliest due run, from indexes. */
export function runStats(ctx: SqliteContext, request: RunStatsRequest): Promise<RunStatsAnswer> {
  return ctx.read('store.runStats', ({ s }) => {
    const { namespace, taskName, now } = request;
    const params = { namespace, task: taskName, now };
    const counts = s.reads.statsCounts.all(params).map((row) => ({
      taskName: row.task_name,
      taskVersion: row.task_version,
      status: row.status as RunStatus,
      count: Number(row.n),
    }));
    const deadLetters = Number(s.reads.statsDeadLetters.get(params)?.n ?? 0);
    const due = s.reads.statsOldestDue.get(params)?.due ?? null;
    return { counts, deadLetters, oldestDueAt: due === null ? null : Number(due) };
  });
}

/** `Store.settledPerMinute`: the per-minute counters from the minute holding `since`. */
export function settledPerMinute(ctx: SqliteContext, request: SettledRequest): Promise<SettledMinute[]> {
  return ctx.read('store.settledPerMinute', ({ s }) =>
    s.reads.settledMinutes
      .all(request.namespace, request.since - (request.since % 60_000))
      .map((row) => ({ minute: Number(row.minute), count: Number(row.n) })),
  );
}

/** `Store.listRuns`: runs newest first below a cursor, optionally of one task, status, group and parent. */
export function listRuns(ctx: SqliteContext, request: ListRunsRequest): Promise<ListedRun[]> {
  return ctx.read('store.listRuns', ({ s }) =>
    s.reads.listRuns({ ...request, before: request.before ?? NEWEST_ID }).map(listedRunOf),
  );
}

/** `Store.listChildren`: one page's children in id order, read only in the columns `ctx.children` shows. */
export function listChildren(ctx: SqliteContext, request: ListChildrenRequest): Promise<ChildRecord[]> {
  return ctx.read('store.listChildren', ({ s }) =>
    s.reads.listChildren.all(request.namespace, request.parentRunId, request.page).map(rowToChild),
  );
}
