import type { HistoryEntry } from '@docket/core';
import {
  EVENT_COLUMNS,
  type EventRow,
  FRESH_RUN_LITERALS,
  freshRunValues,
  GroupLists,
  historyParams,
  isFreshRun,
  RUN_COLUMNS,
  type RunRecord,
  type RunRow,
  rowToRun,
  runParams,
  TaskVersions,
} from '@docket/core/store';
import type Database from 'better-sqlite3';
import type { BatchHooks } from './commit-batcher.js';
import { BY_GROUP_AT_INSERT } from './flow/by-group.js';
import { type FlowStatements, flowStatements } from './flow/statements.js';
import { type CallbackEventStatements, callbackEventStatements } from './sql/callback-events.js';
import { type ChangeStatements, changeStatements } from './sql/changes.js';
import { type ClaimStatements, claimStatements } from './sql/claim.js';
import { type CollectStatements, collectStatements } from './sql/collect.js';
import { type DefinitionStatements, definitionStatements } from './sql/definitions.js';
import { type ReadStatements, readStatements } from './sql/reads.js';
import { type StartStatements, startStatements } from './sql/start.js';
import { FamilyBuffer } from './writes/family-buffer.js';
import { FeedBuffer } from './writes/feed-buffer.js';
import { CountBuffer } from './writes/run-counts.js';
import { walkFamilies } from './writes/run-writes.js';

/** What a run write is guarded by: the row as its plan saw it. */
export type RunGuard = Pick<
  RunRecord,
  'runId' | 'revision' | 'lease' | 'modelCallsUsed' | 'namespace' | 'taskName' | 'taskVersion'
>;

/** Above every id: a listing from the newest. */
export const NEWEST_ID = '\uffff';

/**
 * Docket's own statements, prepared once per connection: those several verbs share (a run's row, history and events,
 * operator receipts, the kept counts) on this class, and each verb's own under its name (`s.claim`, `s.reads`, ...),
 * written beside the verb in `sql/`. Every selection on a hot path is served by an index declared in `schema.ts`.
 */
export class Statements {
  readonly claim: ClaimStatements;
  readonly start: StartStatements;
  readonly callbackEvents: CallbackEventStatements;
  readonly collect: CollectStatements;
  readonly changes: ChangeStatements;
  readonly reads: ReadStatements;
  readonly definitions: DefinitionStatements;
  readonly flow: FlowStatements;

  readonly selectRun: Database.Statement<[string, string], RunRow>;
  readonly selectRunByKey: Database.Statement<[string, string, string], RunRow>;
  private readonly insertRunValues: Database.Statement<unknown[]>;
  private readonly insertFreshRunValues: Database.Statement<unknown[]>;
  private readonly insertHistoryValues: Database.Statement<unknown[]>;
  /** The changes-feed rows of the open batched commit, written at its end (see `FeedBuffer`). */
  readonly feed: FeedBuffer;
  private readonly updates = new Map<string, Database.Statement>();
  readonly insertEvent: Database.Statement<[EventRow]>;
  readonly selectEvent: Database.Statement<[string, string], EventRow>;
  readonly updateEvent: Database.Statement<[EventRow & { expected_revision: number }]>;
  readonly selectCommand: Database.Statement<[string, string], { request_hash: string; result: string }>;
  readonly insertCommand: Database.Statement<[string, string, string, string, number]>;
  /** Adds `n` (1 or -1) to the count of runs of a namespace, task and status (see `writes/run-counts.ts`). */
  readonly addCount: Database.Statement<[string, string, string, string, number]>;
  /** Adds to the runs settled in one minute of a namespace (`namespace`, `minute`, `n`). */
  readonly addSettled: Database.Statement<[string, number, number]>;

  /** Each task version's definition hash, policy, callback kinds and recovery, which its runs' rows leave empty. */
  readonly versions = new TaskVersions((namespace, name, version) => {
    const row = this.definitions.selectDefinition.get(namespace, name, version);
    return row === undefined ? null : { hash: row.hash, definition: JSON.parse(row.definition) };
  });

  /** The groups of each task that claims by group, kept between claims (see `GroupLists`). */
  readonly groupLists = new GroupLists();

  /** The run counts of the open batched commit, written at its end (see `CountBuffer`). */
  readonly counts = new CountBuffer(() => this);

  /** The children that succeeded in the open batched commit, counted on their parents at its end (`FamilyBuffer`). */
  readonly family = new FamilyBuffer((writes) => walkFamilies(this, writes));

  constructor(private readonly db: Database.Database) {
    this.claim = claimStatements(db);
    this.start = startStatements(db);
    this.callbackEvents = callbackEventStatements(db);
    this.collect = collectStatements(db);
    this.changes = changeStatements(db);
    this.reads = readStatements(db);
    this.definitions = definitionStatements(db);
    this.flow = flowStatements(db);
    this.selectRun = db.prepare('SELECT * FROM docket_runs WHERE namespace = ? AND run_id = ?');
    this.selectRunByKey = db.prepare(
      'SELECT * FROM docket_runs WHERE namespace = ? AND task_name = ? AND idempotency_key = ?',
    );
    // Every insert decides the run's `by_group` from its task's record (`flow/by-group.ts`): two more parameters.
    const columns = `${RUN_COLUMNS.join(', ')}, by_group`;
    this.insertRunValues = db.prepare(
      `INSERT INTO docket_runs (${columns}) VALUES (${RUN_COLUMNS.map(() => '?').join(', ')}, ${BY_GROUP_AT_INSERT})`,
    );
    const literals: Partial<Record<string, string>> = FRESH_RUN_LITERALS;
    const fresh = RUN_COLUMNS.map((c) => literals[c] ?? '?').join(', ');
    this.insertFreshRunValues = db.prepare(
      `INSERT INTO docket_runs (${columns}) VALUES (${fresh}, ${BY_GROUP_AT_INSERT})`,
    );
    this.insertHistoryValues = db.prepare(
      'INSERT INTO docket_history (run_id, seq, at, from_status, to_status, reason, actor, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.feed = new FeedBuffer(db);
    this.insertEvent = db.prepare(
      `INSERT OR IGNORE INTO docket_events (${EVENT_COLUMNS.join(', ')}) VALUES (${EVENT_COLUMNS.map((c) => `@${c}`).join(', ')})`,
    );
    this.selectEvent = db.prepare('SELECT * FROM docket_events WHERE namespace = ? AND event_id = ?');
    const eventSets = EVENT_COLUMNS.filter((c) => c !== 'event_id')
      .map((c) => `${c} = @${c}`)
      .join(', ');
    this.updateEvent = db.prepare(
      `UPDATE docket_events SET ${eventSets} WHERE event_id = @event_id AND revision = @expected_revision`,
    );
    this.selectCommand = db.prepare(
      'SELECT request_hash, result FROM docket_commands WHERE namespace = ? AND command_id = ?',
    );
    this.insertCommand = db.prepare(
      'INSERT INTO docket_commands (namespace, command_id, request_hash, result, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.addCount = db.prepare(
      `INSERT INTO docket_run_counts (namespace, task_name, task_version, status, n) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET n = n + excluded.n`,
    );
    this.addSettled = db.prepare(
      `INSERT INTO docket_settled_minutes (namespace, minute, n) VALUES (?, ?, ?)
       ON CONFLICT DO UPDATE SET n = n + excluded.n`,
    );
  }

  /**
   * Inserts a run's row, its values bound by position (cheaper than by name for 42 columns), with the columns its
   * task version decides left empty (`TaskVersions`). A fresh start binds only the 23 columns that differ between
   * fresh runs (`freshRunValues`); the statement holds the others.
   */
  insertRun(run: RunRecord): void {
    const fresh = isFreshRun(run);
    const values: unknown[] = fresh
      ? freshRunValues(run, this.versions.versionValues(run))
      : Object.values(this.versions.narrow(runParams(run)));
    // The two parameters of `BY_GROUP_AT_INSERT`.
    values.push(run.namespace, run.taskName);
    (fresh ? this.insertFreshRunValues : this.insertRunValues).run(values);
  }

  /** A run from its stored row, the columns its task version decides filled from the version (`TaskVersions`). */
  runOf(row: RunRow): RunRecord {
    return rowToRun(this.versions.widen(row));
  }

  /** Inserts one history entry of a run and its changes-feed entry (its position: the next rowid), bound by position. */
  insertHistory(run: RunRecord, entry: HistoryEntry): void {
    const h = historyParams(run.runId, entry);
    this.insertHistoryValues.run(h.run_id, h.seq, h.at, h.from_status, h.to_status, h.reason, h.actor, h.detail);
    this.feed.add([run.namespace, run.taskName, run.taskVersion, run.runId, entry.seq]);
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
    this.versions.narrowChanges(current, changes);
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
}

/**
 * Batch hooks that forget the task versions `s` loaded once a batch rolls back: a definition registered earlier in that
 * batch was undone with it (`TaskVersions.forget`).
 */
export function forgetVersionsOnRollback(s: Statements): BatchHooks {
  return { begin() {}, itemEnded() {}, flush() {}, end: () => s.versions.forget() };
}
