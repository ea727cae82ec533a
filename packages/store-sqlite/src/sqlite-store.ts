import {
  type CallbackCounts,
  DocketError,
  type HistoryEntry,
  type Json,
  type Store,
  type StoreCapabilities,
} from '@docket/core';
import {
  type CommandPlan,
  type CommandRequest,
  type CreateRunRequest,
  type CreateRunResult,
  checkWrite,
  type DefinitionRecord,
  type EventPlan,
  eventParams,
  historyParams,
  isThenable,
  type PlanResult,
  type RunRecord,
  type RunRow,
  type RunWrite,
  rowToHistory,
  rowToRun,
  runChanges,
  runParams,
  type SelectRequest,
  type TaskKey,
  type TransactPlan,
} from '@docket/core/store';
import Database from 'better-sqlite3';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import type { SQLiteTransaction } from 'drizzle-orm/sqlite-core';
import { Checkpointer } from './checkpointer.js';
import { storageFailure } from './errors.js';
import { claimEvents, listEvents, transactEvent } from './events.js';
import { GroupCommit } from './group-commit.js';
import { applyMigrations, assertMigrated } from './migrations.js';
import { collect, runCommand } from './operator-verbs.js';
import { Statements } from './statements.js';

/** The drizzle transaction an effect or a commit-time check receives: writes on it commit with the transition. */
export type SqliteTransaction = SQLiteTransaction<
  'sync',
  Database.RunResult,
  Record<string, never>,
  ExtractTablesWithRelations<Record<string, never>>
>;

/** Options of `sqliteStore`: a file to open, or an application's open better-sqlite3 `Database`. */
export type SqliteStoreOptions = (
  | { filename: string; database?: undefined }
  | { database: Database.Database; filename?: undefined }
) & {
  /** How long a writer waits for another process's write lock before `STORAGE_FAILURE`; default 5000 ms. */
  busyTimeoutMs?: number;
  /** `normal` (default): durable across process crashes, WAL's usual setting; `full`: also across power loss. */
  synchronous?: 'normal' | 'full';
  /** How often idle workers check whether another process committed (`PRAGMA data_version`); default 5 ms. */
  watchMs?: number;
  /**
   * How often a thread of the store's own copies the write-ahead log back into the file; default 200 ms. `0`: no
   * thread, and the commit that fills the log copies it (SQLite's own behaviour), inside the event loop.
   */
  checkpointMs?: number;
  /**
   * Open an existing, migrated file read-only (with `filename`): nothing is created, migrated or written; writes
   * fail with `STORAGE_FAILURE`. For tools that only look, such as `docket runs list`.
   */
  readonly?: boolean;
};

/** The SQLite `Store`, with access to its connection for the application's own queries. */
export interface SqliteStore extends Store<SqliteTransaction> {
  /** The better-sqlite3 connection (after `open`). */
  readonly database: Database.Database;
  /** A drizzle instance on the same connection (after `open`). */
  readonly db: BetterSQLite3Database;
}

const NO_ERROR = Symbol('no error');

/** WAL pages between automatic checkpoints: fewer checkpoints write each hot page back fewer times (see bench). */
const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/**
 * Creates the SQLite store: WAL, `busy_timeout`, `BEGIN IMMEDIATE` for every write, synchronous transactions, and
 * drizzle-kit migrations applied at `open()` (that is, at `queue.ready()`). Several processes may share one file.
 */
export function sqliteStore(options: SqliteStoreOptions): SqliteStore {
  validateOptions(options);
  const capabilities: StoreCapabilities = { asyncTransactions: false, multiProcess: true };
  const ownsConnection = options.database === undefined;
  let conn: Database.Database | null = null;
  let orm: BetterSQLite3Database | null = null;
  let stmts: Statements | null = null;
  let opens = 0;
  let group: GroupCommit | null = null;
  const listeners = new Set<() => void>();
  let watcher: NodeJS.Timeout | null = null;
  let checkpointer: Checkpointer | null = null;
  let lastDataVersion = -1;

  const live = (): { db: Database.Database; s: Statements; orm: BetterSQLite3Database; group: GroupCommit } => {
    if (conn === null || stmts === null || orm === null || group === null) {
      throw new DocketError('CONNECTION_UNAVAILABLE', 'the SQLite store is not open: call queue.ready() first', {
        operation: 'store',
      });
    }
    return { db: conn, s: stmts, orm, group };
  };

  function applyWrite(s: Statements, current: RunRecord, write: RunWrite): void {
    checkWrite(current, write);
    const changed = s.updateRun(current.runId, current.revision, runChanges(current, write.run));
    if (changed !== 1) throw new Error(`internal: run ${current.runId} moved during its transaction`);
    for (const entry of write.history) s.insertHistory.run(historyParams(write.run.runId, entry));
    for (const event of write.events) s.insertEvent.run(eventParams(event));
  }

  function selectAndApply(s: Statements, request: SelectRequest, expired: boolean): RunRecord[] {
    let rows: RunRow[];
    if (expired) {
      rows = s.selectExpired.all(request.namespace, request.now, request.limit);
    } else {
      rows = [];
      for (const task of request.tasks) {
        rows.push(...s.selectClaimable.all(request.namespace, task.name, task.version, request.now, request.limit));
      }
      if (request.tasks.length > 1) {
        rows.sort((a, b) => (a.claim_due_at ?? 0) - (b.claim_due_at ?? 0) || a.created_at - b.created_at);
        rows = rows.slice(0, request.limit);
      }
    }
    const written: RunRecord[] = [];
    for (const row of rows) {
      const run = rowToRun(row);
      const write = request.plan(run);
      if (write === null) continue;
      applyWrite(s, run, write);
      written.push(write.run);
    }
    return written;
  }

  function insertRun(s: Statements, request: CreateRunRequest): CreateRunResult {
    const { run } = request;
    if (run.idempotencyKey !== null) {
      const existing = s.selectRunByKey.get(run.namespace, run.taskName, run.idempotencyKey);
      if (existing) return { kind: 'existing', run: rowToRun(existing) };
    }
    if (request.maxRuns !== null && (s.countRuns.get(run.namespace)?.n ?? 0) >= request.maxRuns) {
      return { kind: 'capacity' };
    }
    s.insertRun.run(runParams(run));
    s.insertHistory.run(historyParams(run.runId, request.history));
    return { kind: 'created', run };
  }

  const store: SqliteStore = {
    name: 'sqlite',
    capabilities,
    get database() {
      return live().db;
    },
    get db() {
      return live().orm;
    },

    async open() {
      if (opens > 0) {
        opens++;
        return;
      }
      let db: Database.Database;
      try {
        db =
          options.database ??
          new Database(options.filename as string, options.readonly ? { readonly: true, fileMustExist: true } : {});
      } catch (error) {
        throw new DocketError('CONNECTION_UNAVAILABLE', `cannot open SQLite database: ${(error as Error).message}`, {
          operation: 'store.open',
          cause: error,
        });
      }
      try {
        db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
        if (options.readonly) {
          assertMigrated(db);
        } else {
          if (!db.memory) db.pragma('journal_mode = WAL');
          db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
          db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
          applyMigrations(db);
        }
        stmts = new Statements(db);
        group = new GroupCommit(db, (error) => storageFailure(error, 'store.commit'));
        orm = drizzle({ client: db });
        // A file the store writes: its log is copied back on a thread of its own (see checkpointer.ts).
        const checkpointMs = options.checkpointMs ?? 200;
        if (!options.readonly && !db.memory && db.name !== '' && checkpointMs > 0) {
          checkpointer = new Checkpointer(db.name, checkpointMs);
        }
        conn = db;
        opens = 1;
      } catch (error) {
        if (ownsConnection) db.close();
        throw storageFailure(error, 'store.open');
      }
    },

    subscribe(listener: () => void) {
      listeners.add(listener);
      if (watcher === null) {
        // data_version changes when another connection commits; reading it touches only the shared-memory header.
        watcher = setInterval(() => {
          if (conn === null || !conn.open) return;
          try {
            const version = conn.pragma('data_version', { simple: true }) as number;
            if (version !== lastDataVersion) {
              const first = lastDataVersion === -1;
              lastDataVersion = version;
              if (!first) for (const notify of listeners) notify();
            }
          } catch {
            // A busy or closing connection: the worker's poll is the fallback.
          }
        }, options.watchMs ?? 5);
        watcher.unref?.();
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && watcher !== null) {
          clearInterval(watcher);
          watcher = null;
        }
      };
    },

    async close() {
      if (opens === 0) return;
      opens--;
      if (opens > 0) return;
      if (watcher !== null) clearInterval(watcher);
      watcher = null;
      listeners.clear();
      const thread = checkpointer;
      checkpointer = null;
      await thread?.close();
      const db = conn;
      conn = null;
      stmts = null;
      orm = null;
      group = null;
      if (ownsConnection && db?.open) {
        try {
          db.close();
        } catch (error) {
          throw new DocketError('RESOURCE_CLEANUP_FAILED', 'closing the SQLite database failed', {
            operation: 'store.close',
            cause: error,
          });
        }
      }
    },

    async registerDefinition(definition: DefinitionRecord) {
      const { s, group: g } = live();
      let conflict = false;
      await g
        .run(() => {
          const existing = s.selectDefinition.get(definition.namespace, definition.name, definition.version);
          if (existing) {
            conflict = existing.hash !== definition.hash;
            return;
          }
          s.insertDefinition.run({
            namespace: definition.namespace,
            name: definition.name,
            version: definition.version,
            hash: definition.hash,
            definition: JSON.stringify(definition.definition),
            created_at: Date.now(),
          });
        })
        .catch((error) => {
          throw storageFailure(error, 'queue.ready');
        });
      if (conflict) {
        throw new DocketError(
          'DEFINITION_HASH_CONFLICT',
          `task ${definition.name}@${definition.version} is already registered with another definition`,
          { operation: 'queue.ready', details: { name: definition.name, version: definition.version } },
        );
      }
    },

    createRun(request) {
      const { s, group: g } = live();
      return g
        .run(() => insertRun(s, request))
        .catch((error) => {
          throw storageFailure(error, 'task.start', request.run.runId);
        });
    },

    async getRun(namespace, runId) {
      const { s } = live();
      try {
        const row = s.selectRun.get(namespace, runId);
        return row ? rowToRun(row) : null;
      } catch (error) {
        throw storageFailure(error, 'store.getRun', runId);
      }
    },

    async getHistory(namespace, runId): Promise<HistoryEntry[]> {
      const { s } = live();
      try {
        if (!s.selectRun.get(namespace, runId)) return [];
        return s.selectHistory.all(runId).map(rowToHistory);
      } catch (error) {
        throw storageFailure(error, 'store.getHistory', runId);
      }
    },

    async callbackCounts(namespace, runId): Promise<CallbackCounts> {
      const { s } = live();
      const counts = { pending: 0, delivered: 0, deadLetters: 0 };
      try {
        for (const { status, n } of s.countEvents.all(runId, namespace)) {
          if (status === 'delivered') counts.delivered += n;
          else if (status === 'dead_letter') counts.deadLetters += n;
          else counts.pending += n;
        }
      } catch (error) {
        throw storageFailure(error, 'store.callbackCounts', runId);
      }
      return counts;
    },

    transact<T>(namespace: string, runId: string, plan: TransactPlan<T, SqliteTransaction>): Promise<T> {
      const { s, orm: db, group: g } = live();
      let planError: unknown = NO_ERROR;
      // Inside the group's transaction, better-sqlite3 turns this drizzle transaction into a SAVEPOINT: the plan and
      // its effect still get a real drizzle transaction, and a throw rolls back only this run's writes.
      return g
        .run(() =>
          db.transaction(
            (tx) => {
              const row = s.selectRun.get(namespace, runId);
              const current = row ? rowToRun(row) : null;
              let result: PlanResult<T> | Promise<PlanResult<T>>;
              try {
                result = plan(tx as unknown as SqliteTransaction, current);
              } catch (error) {
                planError = error;
                throw error;
              }
              if (isThenable(result)) {
                Promise.resolve(result).catch(() => undefined);
                planError = new DocketError('HANDLER_CONTRACT_INVALID', 'SQLite transactions are synchronous', {
                  operation: 'store.transact',
                  runId,
                });
                throw planError;
              }
              const { write, value } = result as PlanResult<T>;
              if (write !== null) {
                if (current === null) throw new Error('internal: write for a missing run');
                applyWrite(s, current, write);
              }
              return value;
            },
            { behavior: 'immediate' },
          ),
        )
        .catch((error) => {
          if (error === planError) throw error;
          throw storageFailure(error, 'store.transact', runId);
        });
    },

    claimDue(request) {
      const { s, group: g } = live();
      return g
        .run(() => selectAndApply(s, request, false))
        .catch((error) => {
          throw storageFailure(error, 'store.claimDue');
        });
    },

    recoverExpired(request) {
      const { s, group: g } = live();
      return g
        .run(() => selectAndApply(s, { ...request, tasks: [] }, true))
        .catch((error) => {
          throw storageFailure(error, 'store.recoverExpired');
        });
    },

    claimEvents(request) {
      const { s, group: g } = live();
      return g
        .run(() => claimEvents(s, request))
        .catch((error) => {
          throw storageFailure(error, 'store.claimEvents');
        });
    },

    transactEvent<T>(namespace: string, eventId: string, plan: EventPlan<T>) {
      const { s, group: g } = live();
      return g
        .run(() => transactEvent(s, namespace, eventId, plan))
        .catch((error) => {
          throw storageFailure(error, 'store.transactEvent');
        });
    },

    async listEvents(request) {
      const { s } = live();
      try {
        return listEvents(s, request);
      } catch (error) {
        throw storageFailure(error, 'store.listEvents');
      }
    },

    async listRuns(request) {
      const { s } = live();
      try {
        return s
          .listRuns(request.namespace, request.taskName, request.status, request.after ?? '', request.limit)
          .map(rowToRun);
      } catch (error) {
        throw storageFailure(error, 'store.listRuns');
      }
    },

    runCommand<T extends Json>(namespace: string, command: CommandRequest, plan: CommandPlan<T>) {
      const { s, group: g } = live();
      let planError: unknown = NO_ERROR;
      return g
        .run(() =>
          runCommand(
            s,
            namespace,
            command,
            (current) => {
              try {
                return plan(current);
              } catch (error) {
                planError = error;
                throw error;
              }
            },
            (current, write) => applyWrite(s, current, write),
          ),
        )
        .catch((error) => {
          if (error === planError) throw error;
          throw storageFailure(error, 'store.runCommand');
        });
    },

    collect(request) {
      const { s, group: g } = live();
      return g
        .run(() => collect(s, request))
        .catch((error) => {
          throw storageFailure(error, 'operator.maintenance.collect');
        });
    },

    async nextDueAt(namespace: string, tasks: readonly TaskKey[]) {
      const { s } = live();
      let earliest: number | null = null;
      try {
        for (const task of tasks) {
          const due = s.selectNextDue.get(namespace, task.name, task.version)?.due ?? null;
          if (due !== null && (earliest === null || due < earliest)) earliest = due;
        }
      } catch (error) {
        throw storageFailure(error, 'store.nextDueAt');
      }
      return earliest;
    },
  };
  return store;
}

function validateOptions(options: unknown): asserts options is SqliteStoreOptions {
  const fail = (message: string) => {
    throw new DocketError('CONFIG_INVALID', message, { operation: 'sqliteStore' });
  };
  if (typeof options !== 'object' || options === null) return fail('sqliteStore needs { filename } or { database }');
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (
      !['filename', 'database', 'busyTimeoutMs', 'synchronous', 'watchMs', 'checkpointMs', 'readonly'].includes(key)
    ) {
      fail(`unknown option ${key}`);
    }
  }
  const hasFile = o.filename !== undefined;
  const hasDb = o.database !== undefined;
  if (hasFile === hasDb) fail('sqliteStore needs exactly one of filename and database');
  if (hasFile && (typeof o.filename !== 'string' || o.filename.length === 0))
    fail('filename must be a non-empty string');
  if (hasDb && !(o.database instanceof Database)) fail('database must be a better-sqlite3 Database');
  if (o.busyTimeoutMs !== undefined && (!Number.isInteger(o.busyTimeoutMs) || (o.busyTimeoutMs as number) < 0)) {
    fail('busyTimeoutMs must be a non-negative integer');
  }
  if (o.readonly !== undefined && typeof o.readonly !== 'boolean') fail('readonly must be a boolean');
  if (o.readonly === true && !hasFile) fail('readonly needs filename');
  if (o.watchMs !== undefined && (!Number.isInteger(o.watchMs) || (o.watchMs as number) < 1)) {
    fail('watchMs must be a positive integer');
  }
  if (o.checkpointMs !== undefined && (!Number.isInteger(o.checkpointMs) || (o.checkpointMs as number) < 0)) {
    fail('checkpointMs must be a non-negative integer');
  }
  if (o.synchronous !== undefined && o.synchronous !== 'normal' && o.synchronous !== 'full') {
    fail("synchronous must be 'normal' or 'full'");
  }
}
