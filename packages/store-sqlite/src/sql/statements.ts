import type { HistoryEntry } from '@docket/core';
import {
  EVENT_COLUMNS,
  type EventRow,
  type HistoryRow,
  historyParams,
  RUN_COLUMNS,
  type RunRecord,
  type RunRow,
  runParams,
  runRowOf,
} from '@docket/core/store';
import type Database from 'better-sqlite3';
import { CountBuffer } from './run-counts.js';

/** What a run write is guarded by: the row as its plan saw it. */
export type RunGuard = Pick<RunRecord, 'runId' | 'revision' | 'lease' | 'modelCallsUsed'>;

/** The named parameters of the `runStats` statements. */
export interface StatsParams {
  namespace: string;
  task: string | null;
  now: number;
}

/**
 * Docket's own statements, prepared once per connection. Each is named for the storage verb it serves; every
 * selection that runs on a hot path is served by an index declared in `../schema.ts`.
 */
export class Statements {
  readonly selectRun: Database.Statement<[string, string], RunRow>;
  readonly selectRunByKey: Database.Statement<[string, string, string], RunRow>;
  readonly countRuns: Database.Statement<[string], { n: number }>;
  private readonly insertRunValues: Database.Statement<unknown[]>;
  private readonly updates = new Map<string, Database.Statement>();
  private readonly insertHistoryValues: Database.Statement<unknown[]>;
  readonly selectHistory: Database.Statement<[string], HistoryRow>;
  readonly insertEvent: Database.Statement<[EventRow]>;
  readonly selectEvent: Database.Statement<[string, string], EventRow>;
  readonly updateEvent: Database.Statement<[EventRow & { expected_revision: number }]>;
  readonly selectDueEvents: Database.Statement<[string, number, number], EventRow>;
  readonly selectAbandonedEvents: Database.Statement<[string, number, number], EventRow>;
  readonly listEvents: Database.Statement<[string, string, string, number], EventRow>;
  readonly selectCommand: Database.Statement<[string, string], { request_hash: string; result: string }>;
  readonly insertCommand: Database.Statement<[string, string, string, string, number]>;
  readonly selectCollectable: Database.Statement<[string, string, string, number], RunRow>;
  readonly countUnsettled: Database.Statement<[string], { n: number }>;
  readonly deleteRun: Database.Statement<[string]>;
  readonly deleteHistory: Database.Statement<[string]>;
  readonly deleteDeliveredOfRun: Database.Statement<[string]>;
  readonly deleteDelivered: Database.Statement<[string, number]>;
  readonly deleteDeadLetters: Database.Statement<[string, number]>;
  readonly deleteCommands: Database.Statement<[string, number]>;
  private readonly lists = new Map<string, Database.Statement>();
  readonly countEvents: Database.Statement<[string, string], { status: string; n: number }>;
  /** `callbackCountsOf`: events by run and status of the runs in a JSON array of ids. */
  readonly countEventsOf: Database.Statement<[string, string], { run_id: string; status: string; n: number }>;
  /** `runStats`: the trigger-kept run counts, the dead letters, the earliest due claimable run (`@task`: a task or NULL). */
  readonly statsCounts: Database.Statement<
    [StatsParams],
    { task_name: string; task_version: string; status: string; n: number }
  >;
  /** Adds to the runs settled in one minute of a namespace (`namespace`, `minute`, `n`). */
  readonly addSettled: Database.Statement<[string, number, number]>;
  /** The runs settled per minute of a namespace from `since` on. */
  readonly settledMinutes: Database.Statement<[string, number], { minute: number; n: number }>;
  /** Deletes a namespace's minutes before a time. */
  readonly deleteSettledMinutes: Database.Statement<[string, number]>;
  readonly statsDeadLetters: Database.Statement<[StatsParams], { n: number }>;
  /** Adds `n` (1 or -1) to the count of runs of a namespace, task and status (see `run-counts.ts`). */
  readonly addCount: Database.Statement<[string, string, string, string, number]>;
  readonly statsOldestDue: Database.Statement<[StatsParams], { due: number | null }>;
  /** The highest priority below the given one that a task has claimable runs of (due or not). */
  readonly selectBandBelow: Database.Statement<[string, string, string, number], { priority: number }>;
  /** Due runs of one task and priority, as values in `RUN_COLUMNS` order (raw: see `runRowOf`). */
  readonly selectClaimable: Database.Statement<[string, string, string, number, number, number], unknown[]>;
  /** Runs whose lease expired, as values in `RUN_COLUMNS` order. */
  readonly selectExpired: Database.Statement<[string, number, number], unknown[]>;
  readonly selectNextDue: Database.Statement<[string, string, string, number], { due: number | null }>;
  readonly selectDefinition: Database.Statement<[string, string, string], { hash: string }>;
  readonly insertDefinition: Database.Statement<[Record<string, string | number>]>;

  /** The run counts of the open group transaction, written at its end (see `CountBuffer`). */
  readonly counts = new CountBuffer(() => this);

  constructor(private readonly db: Database.Database) {
    this.selectRun = db.prepare('SELECT * FROM docket_runs WHERE namespace = ? AND run_id = ?');
    this.selectRunByKey = db.prepare(
      'SELECT * FROM docket_runs WHERE namespace = ? AND task_name = ? AND idempotency_key = ?',
    );
    this.countRuns = db.prepare('SELECT count(*) AS n FROM docket_runs WHERE namespace = ?');
    this.insertRunValues = db.prepare(
      `INSERT INTO docket_runs (${RUN_COLUMNS.join(', ')}) VALUES (${RUN_COLUMNS.map(() => '?').join(', ')})`,
    );
    this.insertHistoryValues = db.prepare(
      'INSERT INTO docket_history (run_id, seq, at, from_status, to_status, reason, actor, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.selectHistory = db.prepare('SELECT * FROM docket_history WHERE run_id = ? ORDER BY seq');
    this.insertEvent = db.prepare(
      `INSERT OR IGNORE INTO docket_events (${EVENT_COLUMNS.join(', ')}) VALUES (${EVENT_COLUMNS.map((c) => `@${c}`).join(', ')})`,
    );
    const eventSets = EVENT_COLUMNS.filter((c) => c !== 'event_id')
      .map((c) => `${c} = @${c}`)
      .join(', ');
    this.selectEvent = db.prepare('SELECT * FROM docket_events WHERE namespace = ? AND event_id = ?');
    this.updateEvent = db.prepare(
      `UPDATE docket_events SET ${eventSets} WHERE event_id = @event_id AND revision = @expected_revision`,
    );
    this.selectDueEvents = db.prepare(
      `SELECT * FROM docket_events INDEXED BY docket_events_due
       WHERE namespace = ? AND status IN ('pending', 'retrying') AND due_at <= ? ORDER BY due_at LIMIT ?`,
    );
    this.selectAbandonedEvents = db.prepare(
      `SELECT * FROM docket_events INDEXED BY docket_events_due
       WHERE namespace = ? AND status = 'delivering' AND lease_expires_at <= ? ORDER BY due_at LIMIT ?`,
    );
    this.listEvents = db.prepare(
      'SELECT * FROM docket_events WHERE namespace = ? AND status = ? AND event_id < ? ORDER BY event_id DESC LIMIT ?',
    );
    this.selectCommand = db.prepare(
      'SELECT request_hash, result FROM docket_commands WHERE namespace = ? AND command_id = ?',
    );
    this.insertCommand = db.prepare(
      'INSERT INTO docket_commands (namespace, command_id, request_hash, result, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    // Run ids start with their creation time, so a run last changed before the cutoff was created before it too:
    // the scan walks the primary key up to the cutoff's id prefix instead of needing an index of its own.
    this.selectCollectable = db.prepare(
      `SELECT * FROM docket_runs WHERE namespace = ? AND run_id > ? AND run_id < ? ORDER BY run_id LIMIT ?`,
    );
    this.countUnsettled = db.prepare(
      "SELECT count(*) AS n FROM docket_events WHERE run_id = ? AND status IN ('pending', 'retrying', 'delivering')",
    );
    this.deleteRun = db.prepare('DELETE FROM docket_runs WHERE run_id = ?');
    this.deleteHistory = db.prepare('DELETE FROM docket_history WHERE run_id = ?');
    this.deleteDeliveredOfRun = db.prepare("DELETE FROM docket_events WHERE run_id = ? AND status = 'delivered'");
    this.deleteDelivered = db.prepare(
      "DELETE FROM docket_events WHERE namespace = ? AND status = 'delivered' AND delivered_at < ?",
    );
    this.deleteDeadLetters = db.prepare(
      "DELETE FROM docket_events WHERE namespace = ? AND status = 'dead_letter' AND dead_at < ?",
    );
    this.deleteCommands = db.prepare('DELETE FROM docket_commands WHERE namespace = ? AND created_at < ?');
    // Parked and finished runs from the counts the store keeps (`run-counts.ts`); pending and retrying runs from the
    // claim index, running and pausing ones from the lease index: both as small as the runs not finished.
    const task = '(@task IS NULL OR task_name = @task)';
    this.statsCounts = db.prepare(
      `SELECT task_name, task_version, status, n FROM docket_run_counts WHERE namespace = @namespace AND ${task} AND n > 0
       UNION ALL
       SELECT task_name, task_version, status, count(*) FROM docket_runs INDEXED BY docket_runs_claim_priority
       WHERE namespace = @namespace AND ${task} AND claim_due_at IS NOT NULL AND status IN ('pending', 'retrying')
       GROUP BY task_name, task_version, status
       UNION ALL
       SELECT task_name, task_version, status, count(*) FROM docket_runs INDEXED BY docket_runs_lease
       WHERE namespace = @namespace AND ${task} AND lease_expires_at IS NOT NULL AND status IN ('running', 'pausing')
       GROUP BY task_name, task_version, status`,
    );
    this.addCount = db.prepare(
      `INSERT INTO docket_run_counts (namespace, task_name, task_version, status, n) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET n = n + excluded.n`,
    );
    this.addSettled = db.prepare(
      `INSERT INTO docket_settled_minutes (namespace, minute, n) VALUES (?, ?, ?)
       ON CONFLICT DO UPDATE SET n = n + excluded.n`,
    );
    this.settledMinutes = db.prepare(
      'SELECT minute, n FROM docket_settled_minutes WHERE namespace = ? AND minute >= ? ORDER BY minute',
    );
    this.deleteSettledMinutes = db.prepare('DELETE FROM docket_settled_minutes WHERE namespace = ? AND minute < ?');
    this.statsDeadLetters = db.prepare(
      `SELECT count(*) AS n FROM docket_events INDEXED BY docket_events_due
       WHERE namespace = @namespace AND status = 'dead_letter' AND (@task IS NULL OR task_name = @task)`,
    );
    this.statsOldestDue = db.prepare(
      `SELECT min(claim_due_at) AS due FROM docket_runs INDEXED BY docket_runs_claim_priority
       WHERE namespace = @namespace AND (@task IS NULL OR task_name = @task) AND claim_due_at IS NOT NULL AND claim_due_at <= @now`,
    );
    this.countEvents = db.prepare(
      'SELECT status, count(*) AS n FROM docket_events WHERE run_id = ? AND namespace = ? GROUP BY status',
    );
    this.countEventsOf = db.prepare(
      `SELECT run_id, status, count(*) AS n FROM docket_events
       WHERE run_id IN (SELECT value FROM json_each(?)) AND namespace = ? GROUP BY run_id, status`,
    );
    this.selectBandBelow = db.prepare(
      `SELECT priority FROM docket_runs INDEXED BY docket_runs_claim_priority
       WHERE namespace = ? AND task_name = ? AND task_version = ? AND priority < ? AND claim_due_at IS NOT NULL
       ORDER BY priority DESC LIMIT 1`,
    );
    const runColumns = RUN_COLUMNS.join(', ');
    this.selectClaimable = db
      .prepare<[string, string, string, number, number, number], unknown[]>(
        `SELECT ${runColumns} FROM docket_runs INDEXED BY docket_runs_claim_priority
         WHERE namespace = ? AND task_name = ? AND task_version = ? AND priority = ? AND claim_due_at IS NOT NULL
         AND claim_due_at <= ? ORDER BY claim_due_at LIMIT ?`,
      )
      .raw(true);
    this.selectExpired = db
      .prepare<[string, number, number], unknown[]>(
        `SELECT ${runColumns} FROM docket_runs INDEXED BY docket_runs_lease
         WHERE namespace = ? AND lease_expires_at IS NOT NULL AND lease_expires_at <= ?
         ORDER BY lease_expires_at LIMIT ?`,
      )
      .raw(true);
    this.selectNextDue = db.prepare(
      `SELECT min(claim_due_at) AS due FROM docket_runs INDEXED BY docket_runs_claim_priority
       WHERE namespace = ? AND task_name = ? AND task_version = ? AND priority = ? AND claim_due_at IS NOT NULL`,
    );
    this.selectDefinition = db.prepare(
      'SELECT hash FROM docket_definitions WHERE namespace = ? AND name = ? AND version = ?',
    );
    this.insertDefinition = db.prepare(
      'INSERT INTO docket_definitions (namespace, name, version, hash, definition, created_at) VALUES (@namespace, @name, @version, @hash, @definition, @created_at)',
    );
  }

  /** Inserts a run's row, its values bound by position (cheaper than by name for 37 columns). */
  insertRun(run: RunRecord): void {
    const row = runParams(run);
    this.insertRunValues.run(RUN_COLUMNS.map((column) => row[column]));
  }

  /** Inserts one history entry of a run, its values bound by position. */
  insertHistory(runId: string, entry: HistoryEntry): void {
    const h = historyParams(runId, entry);
    this.insertHistoryValues.run(h.run_id, h.seq, h.at, h.from_status, h.to_status, h.reason, h.actor, h.detail);
  }

  /**
   * Writes `changes` (the columns a write changes, from core's `runChanges`) to a run, only if the stored row is still
   * `current`: the same revision, lease expiry and model call count (core's `checkWrite` makes those the only columns
   * that change without a new revision). Setting only changed columns lets SQLite leave the index entries of unchanged
   * columns alone, which is most of the cost of a transition. Statements are cached per column set; there are a
   * handful. Answers whether the row was written.
   */
  updateRun(current: RunGuard, changes: Partial<RunRow>): boolean {
    let key = '';
    const values: unknown[] = [];
    for (const column in changes) {
      key += `${column},`;
      values.push(changes[column as keyof RunRow]);
    }
    let statement = this.updates.get(key);
    if (!statement) {
      // A write that changes no column still checks its guard (with a SET that leaves every index alone).
      const columns = Object.keys(changes);
      const sets = columns.length === 0 ? 'revision = revision' : columns.map((c) => `${c} = ?`).join(', ');
      statement = this.db.prepare(
        `UPDATE docket_runs SET ${sets} WHERE run_id = ? AND revision = ? AND lease_expires_at IS ? AND model_calls_used = ?`,
      );
      this.updates.set(key, statement);
    }
    values.push(current.runId, current.revision, current.lease?.expiresAt ?? null, current.modelCallsUsed);
    return statement.run(values).changes === 1;
  }

  /** Lists runs newest first below `before`, filtered by task name and status when given (raw rows; statements cached per filter). */
  listRuns(namespace: string, taskName: string | null, status: string | null, before: string, limit: number): RunRow[] {
    const key = `${taskName !== null}:${status !== null}`;
    let statement = this.lists.get(key);
    if (!statement) {
      const where = ['namespace = @namespace', 'run_id < @before'];
      if (taskName !== null) where.push('task_name = @task_name');
      if (status !== null) where.push('status = @status');
      statement = this.db
        .prepare(
          `SELECT ${RUN_COLUMNS.join(', ')} FROM docket_runs WHERE ${where.join(' AND ')} ORDER BY run_id DESC LIMIT @limit`,
        )
        .raw(true);
      this.lists.set(key, statement);
    }
    const params: Record<string, unknown> = { namespace, before, limit };
    if (taskName !== null) params.task_name = taskName;
    if (status !== null) params.status = status;
    return (statement.all(params) as unknown[][]).map(runRowOf);
  }
}
