import type { Store, StoreCapabilities } from '@docket/core';
import { bindVerbs } from '@docket/core/store';
import type Database from 'better-sqlite3';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { SqliteConnection } from './connection.js';
import { SqliteContext } from './context.js';
import { type SqliteStoreOptions, type SqliteTransaction, validateOptions } from './options.js';
import { claimCallbackEvents, listCallbackEvents, transactCallbackEvent } from './sql/callback-events.js';
import { changesHead, readChanges, trimChanges } from './sql/changes.js';
import { claim, nextDueAt } from './sql/claim.js';
import { collect } from './sql/collect.js';
import { runCommand } from './sql/commands.js';
import { getDefinition, listTasks, registerDefinition } from './sql/definitions.js';
import {
  callbackCounts,
  callbackCountsOf,
  getHistory,
  getRun,
  listChildren,
  listRuns,
  runStats,
  settledPerMinute,
} from './sql/reads.js';
import { dueSchedules, listSchedules, transactSchedule } from './sql/schedules.js';
import { createRun, createRuns } from './sql/start.js';
import { transact } from './sql/transact.js';

export type { SqliteStoreOptions, SqliteTransaction } from './options.js';

/** The SQLite `Store`, with access to its connection for the application's own queries. */
export interface SqliteStore extends Store<SqliteTransaction> {
  /** The better-sqlite3 connection (after `open`). */
  readonly database: Database.Database;
  /** A drizzle instance on the same connection (after `open`). */
  readonly db: BetterSQLite3Database;
}

/**
 * Creates the SQLite store: WAL, `busy_timeout`, `BEGIN IMMEDIATE` for every write, synchronous transactions, and
 * drizzle-kit migrations applied at `open()` (that is, at `queue.ready()`). Several processes may share one file.
 */
export function sqliteStore(options: SqliteStoreOptions): SqliteStore {
  validateOptions(options);
  const capabilities: StoreCapabilities = { asyncTransactions: false, multiProcess: true };
  const ctx = new SqliteContext();
  const connection = new SqliteConnection(ctx, options);
  return {
    name: 'sqlite',
    capabilities,
    get database() {
      return ctx.live().db;
    },
    get db() {
      return ctx.live().orm;
    },
    open: () => connection.open(),
    close: () => connection.close(),
    subscribe: (listener) => connection.subscribe(listener),
    ...bindVerbs<SqliteContext, SqliteTransaction>(ctx, {
      registerDefinition,
      listTasks,
      getDefinition,
      createRun,
      createRuns,
      transactSchedule,
      dueSchedules,
      listSchedules,
      getRun,
      getHistory,
      callbackCounts,
      runStats,
      callbackCountsOf,
      settledPerMinute,
      transact,
      claimDue: (c, request) => claim(c, request, false),
      recoverExpired: (c, request) => claim(c, { ...request, tasks: [] }, true),
      nextDueAt,
      claimCallbackEvents,
      transactCallbackEvent,
      listCallbackEvents,
      listRuns,
      listChildren,
      runCommand,
      collect,
      readChanges,
      changesHead,
      trimChanges,
    }),
  };
}
