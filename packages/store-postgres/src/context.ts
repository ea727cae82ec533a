import { DocketError } from '@docket/core';
import type { RunRecord, RunWrite, TaskFlowState, TaskRecord } from '@docket/core/store';
import { flowStateOf, GroupLists, KnownRuns } from '@docket/core/store';
import { type SQL, sql } from 'drizzle-orm';
import type { PostgresConnection, PostgresTransaction } from './connection.js';
import { classify, connectionLost, OutcomeTracker } from './errors.js';
import { FlowSharing } from './sql/claim/flow-sharing.js';
import { HeldClaims } from './sql/claim/held-claims.js';
import { SharedColumns } from './sql/claim/plain-statement.js';
import { PgTaskVersions } from './task-versions.js';
import type { Session } from './wire/session.js';
import { applyLockedWrites, type Executor, type Tables } from './writes/run-writes.js';
import type { Transaction } from './writes/transaction.js';

/** The tables as drizzle SQL fragments, for the verbs written with drizzle's `sql` template. */
export interface QualifiedTables {
  runs: SQL;
  history: SQL;
  events: SQL;
  definitions: SQL;
  commands: SQL;
  schedules: SQL;
  runCounts: SQL;
  settledMinutes: SQL;
  /** The changes feed and its floors. */
  changes: SQL;
  feedFloors: SQL;
  feed: SQL;
}

/** The qualified table names of a store's `schema` and its notification channel. */
export function tablesIn(schema: string): Tables {
  const name = (table: string) => `"${schema}"."${table}"`;
  return {
    runs: name('docket_runs'),
    history: name('docket_history'),
    events: name('docket_events'),
    tasks: name('docket_tasks'),
    flowGroups: name('docket_flow_groups'),
    flowClaims: name('docket_flow_claims'),
    channel: `docket_${schema}`,
    versions: new PgTaskVersions(name('docket_definitions')),
  };
}

/** What every verb of one PostgreSQL store shares: its tables, its connection, its transactions and fast-path state. */
export class PgContext {
  /** Why the LISTEN connection is down while it is being reconnected, else `null` (see `subscribe`). */
  listenLost: string | null = null;

  /** Qualified table names as text, and the notification channel. */
  readonly tables: Tables;
  /** The same tables as SQL fragments. */
  readonly q: QualifiedTables;
  readonly channel: string;
  /** The qualified name of the function that gives feed entries their positions (migration 0010). */
  readonly sequencer: string;
  /** The open connection, or `null` before `open()` and after the last `close()`. */
  connection: PostgresConnection | null = null;
  /** Runs this process last wrote, as it wrote them (core's `KnownRuns`). */
  readonly known = new KnownRuns();
  /** The claim columns shared by the runs last claimed (see `sql/claim/plain-statement.ts`). */
  readonly sharedColumns = new SharedColumns();
  /** Claims whose transactions are held open until the end of the turn (see `sql/claim/held-claims.ts`). */
  readonly held = new HeldClaims();
  /** The groups of each task that claims by group, kept between flow claims (core's `GroupLists`). */
  readonly groupLists = new GroupLists();
  /** Which tasks' flow claims share their flow lock (see `sql/claim/flow-sharing.ts`). */
  readonly flowSharing = new FlowSharing();
  /**
   * The flow states of the tasks a claim read last (by `namespace, name`), and when: claims use them again for a
   * short while (`sql/claim/index.ts`); `null` until read, and after this process changed a task.
   */
  flowStates: Map<string, TaskFlowState | null> | null = null;
  private flowStatesAt = Number.NEGATIVE_INFINITY;

  /** Keeps the flow states a claim read. */
  rememberFlowStates(states: Map<string, TaskFlowState | null>): void {
    this.flowStates = states;
    this.flowStatesAt = Date.now();
  }

  /** Keeps the state of a task this process just wrote (registered, paused or resumed). */
  rememberFlowState(task: TaskRecord): void {
    const states = this.flowStates ?? new Map<string, TaskFlowState | null>();
    states.set(`${task.namespace}\u0000${task.name}`, flowStateOf(task));
    this.rememberFlowStates(states);
  }

  /** How long ago the flow states were read (`Infinity` when they are not kept). */
  flowStatesAge(): number {
    return this.flowStates === null ? Number.POSITIVE_INFINITY : Date.now() - this.flowStatesAt;
  }

  constructor(
    readonly schema: string,
    readonly holdClaims: boolean,
  ) {
    const name = (table: string) => `"${schema}"."${table}"`;
    this.channel = `docket_${schema}`;
    this.tables = tablesIn(schema);
    this.q = {
      runs: sql.raw(this.tables.runs),
      history: sql.raw(this.tables.history),
      events: sql.raw(this.tables.events),
      definitions: sql.raw(name('docket_definitions')),
      commands: sql.raw(name('docket_commands')),
      schedules: sql.raw(name('docket_schedules')),
      runCounts: sql.raw(name('docket_run_counts')),
      settledMinutes: sql.raw(name('docket_settled_minutes')),
      changes: sql.raw(name('docket_changes')),
      feedFloors: sql.raw(name('docket_feed_floors')),
      feed: sql.raw(name('docket_feed')),
    };
    this.sequencer = `"${schema}"."docket_sequence_changes"`;
  }

  /** The drizzle database of the open connection; `CONNECTION_UNAVAILABLE` when the store is not open. */
  live(): PostgresConnection['db'] {
    if (!this.connection) {
      throw new DocketError('CONNECTION_UNAVAILABLE', 'the PostgreSQL store is not open: call queue.ready() first', {
        operation: 'store',
      });
    }
    return this.connection.db;
  }

  /** The pipelining session of the open connection, when its driver has one (node-postgres, not PGlite). */
  get session(): Session | undefined {
    return this.connection?.session;
  }

  /** One transaction on a pooled connection, with `outcome` marking the moment COMMIT is sent. */
  readonly transaction: Transaction = (outcome, work) => {
    const db = this.live();
    const inTransaction = async (tx: PostgresTransaction) => {
      const value = await work(tx);
      outcome.committing();
      return value;
    };
    const own = this.connection?.transaction;
    return own ? own(inTransaction) : db.transaction((tx) => inTransaction(tx as PostgresTransaction));
  };

  /**
   * Runs `work` in one transaction; maps driver errors, and a lost connection while committing to OUTCOME_UNKNOWN.
   * An error that `passThrough` returns (what the application's effect or check threw, SQL errors included) is
   * rethrown as it is: it is the page's failure, not the store's.
   */
  async inTransaction<T>(
    operation: string,
    work: (tx: PostgresTransaction) => Promise<T>,
    context: { runId?: string; idempotencyKey?: string } = {},
    passThrough?: () => unknown,
  ): Promise<T> {
    const outcome = new OutcomeTracker();
    try {
      return await this.transaction(outcome, work);
    } catch (error) {
      // The effect's own error is the page's failure, unless the connection died under it: a store failure then,
      // which consumes no attempt (the lease recovers the run).
      if (passThrough !== undefined && error === passThrough() && !outcome.reachedCommit && !connectionLost(error)) {
        throw error;
      }
      throw classify(error, outcome, operation, context);
    }
  }

  /** Applies one conditional run write to a row this transaction locked. */
  applyWrite(tx: Executor, current: RunRecord, write: RunWrite): Promise<void> {
    return applyLockedWrites(tx, this.tables, [{ current, write }]);
  }
}
