import { DocketError } from '@docket/core';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { Checkpointer } from './checkpointer.js';
import { allHooks, CommitBatcher } from './commit-batcher.js';
import type { SqliteContext } from './context.js';
import { batchAborted, storageFailure } from './errors.js';
import { FileIdentityWatch } from './file-identity.js';
import { applyMigrations, assertMigrated } from './migrations.js';
import type { SqliteStoreOptions } from './options.js';
import { forgetVersionsOnRollback, Statements } from './statements.js';
import { familyFirst } from './writes/family-buffer.js';

/** WAL pages between automatic checkpoints: fewer checkpoints write each hot page back fewer times (see bench). */
const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/**
 * Opens, watches and closes one store's connection: reference-counted opens, the pragmas and migrations, the
 * checkpoint thread, and the `data_version` watcher that tells idle workers another process committed.
 */
export class SqliteConnection {
  private opens = 0;
  private readonly listeners = new Set<() => void>();
  private watcher: NodeJS.Timeout | null = null;
  private checkpointer: Checkpointer | null = null;
  private lastDataVersion = -1;
  /** Watches the database file's identity while a file-backed store is open (see `file-identity.ts`). */
  private identity: FileIdentityWatch | null = null;

  constructor(
    private readonly ctx: SqliteContext,
    private readonly options: SqliteStoreOptions,
  ) {}

  /** `Store.open`: the first call opens (and migrates, unless read-only); later calls count. */
  async open(): Promise<void> {
    if (this.opens > 0) {
      this.opens++;
      return;
    }
    const db = this.connect();
    try {
      this.configure(db);
      const s = new Statements(db);
      this.ctx.open = {
        db,
        s,
        orm: drizzle({ client: db }),
        batch: new CommitBatcher(
          db,
          (error) => storageFailure(error, 'store.commit'),
          512,
          batchAborted,
          familyFirst(s.family, allHooks(s.counts, s.feed, forgetVersionsOnRollback(s))),
        ),
      };
      // A file the store writes: its log is copied back on a thread of its own (see checkpointer.ts).
      const checkpointMs = this.options.checkpointMs ?? 200;
      if (!this.options.readonly && !db.memory && db.name !== '' && checkpointMs > 0) {
        this.checkpointer = new Checkpointer(db.name, checkpointMs);
      }
      if (!db.memory && db.name !== '') {
        this.ctx.lost = null;
        this.identity = new FileIdentityWatch(db.name, this.options.fileCheckMs ?? 250, (why) => {
          this.ctx.lost = why;
        });
      }
      this.opens = 1;
    } catch (error) {
      this.ctx.open = null;
      if (this.options.database === undefined) db.close();
      throw storageFailure(error, 'store.open');
    }
  }

  private connect(): Database.Database {
    const { options } = this;
    try {
      return (
        options.database ??
        new Database(options.filename as string, options.readonly ? { readonly: true, fileMustExist: true } : {})
      );
    } catch (error) {
      throw new DocketError('CONNECTION_UNAVAILABLE', `cannot open SQLite database: ${(error as Error).message}`, {
        operation: 'store.open',
        cause: error,
      });
    }
  }

  private configure(db: Database.Database): void {
    db.pragma(`busy_timeout = ${this.options.busyTimeoutMs ?? 5000}`);
    if (this.options.readonly) {
      try {
        assertMigrated(db);
      } catch (error) {
        throw readOnlyRefusal(error, db.name);
      }
      return;
    }
    // Checked before anything that writes (WAL mode writes the file's header): a file that is not Docket's is refused
    // without a byte of it changed.
    if (this.options.migrate === false) assertMigrated(db);
    if (!db.memory) db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${this.options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    if (this.options.migrate !== false) applyMigrations(db);
  }

  /** `Store.subscribe`: polls `PRAGMA data_version`, which changes when another connection commits. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    if (this.watcher === null) {
      this.watcher = setInterval(() => this.checkDataVersion(), this.options.watchMs ?? 5);
      this.watcher.unref?.();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.watcher !== null) {
        clearInterval(this.watcher);
        this.watcher = null;
      }
    };
  }

  /** Reading data_version touches only the shared-memory header; a busy or closing connection leaves it to the poll. */
  private checkDataVersion(): void {
    const conn = this.ctx.open?.db;
    if (conn === undefined || !conn.open) return;
    try {
      const version = conn.pragma('data_version', { simple: true }) as number;
      if (version === this.lastDataVersion) return;
      const first = this.lastDataVersion === -1;
      this.lastDataVersion = version;
      if (!first) for (const notify of this.listeners) notify();
    } catch {
      // The worker's poll is the fallback.
    }
  }

  /** `Store.close`: the last call stops the watcher and the checkpoint thread and closes a connection it opened. */
  async close(): Promise<void> {
    if (this.opens === 0) return;
    if (--this.opens > 0) return;
    if (this.watcher !== null) clearInterval(this.watcher);
    this.watcher = null;
    this.listeners.clear();
    this.identity?.stop();
    this.identity = null;
    this.ctx.lost = null;
    const thread = this.checkpointer;
    this.checkpointer = null;
    await thread?.close();
    const db = this.ctx.open?.db;
    this.ctx.open = null;
    if (this.options.database !== undefined || !db?.open) return;
    if (!this.options.readonly && !db.memory) leaveWal(db);
    try {
      db.close();
    } catch (error) {
      throw new DocketError('RESOURCE_CLEANUP_FAILED', 'closing the SQLite database failed', {
        operation: 'store.close',
        cause: error,
      });
    }
  }
}

/**
 * Switches a file back to the rollback journal as its last connection closes, so that a cleanly closed file can be
 * read where its directory cannot be written (a WAL file needs its `-shm` file created beside it to be read). While
 * another connection (another process) still has the file open the switch fails at once and the file stays in WAL:
 * the last to close switches it, and the next open returns it to WAL.
 */
function leaveWal(db: Database.Database): void {
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('journal_mode = DELETE');
  } catch {
    // Another connection has it open.
  }
}

/** A read-only open that SQLite refused because the file is in WAL mode in a directory this user cannot write. */
function readOnlyRefusal(error: unknown, filename: string): unknown {
  const code = (error as { code?: unknown })?.code;
  if (code !== 'SQLITE_READONLY_DIRECTORY' && code !== 'SQLITE_CANTOPEN') return error;
  return new DocketError(
    'CONNECTION_UNAVAILABLE',
    `cannot read ${filename}: it is in WAL mode while a process has it open (or one did not close it), and reading ` +
      'it needs its -shm file, which this user cannot create in its directory; read it as a user who can write there',
    { operation: 'store.open', cause: error, details: { sqliteCode: code } },
  );
}
