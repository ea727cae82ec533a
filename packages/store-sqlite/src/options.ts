import { DocketError } from '@docket/core';
import Database from 'better-sqlite3';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type { SQLiteTransaction } from 'drizzle-orm/sqlite-core';

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
   * How often the store checks that the file at its path is still the one it opened (device and inode); default
   * 250 ms. A file deleted or replaced under it makes every read and write `CONNECTION_UNAVAILABLE`.
   */
  fileCheckMs?: number;
  /**
   * Open an existing, migrated file read-only (with `filename`): nothing is created, migrated or written; writes
   * fail with `STORAGE_FAILURE`. For tools that only look, such as `docket runs list`.
   */
  readonly?: boolean;
  /**
   * `false`: open an existing file migrated by this version and change nothing of its schema (`SCHEMA_MISMATCH`
   * when Docket's tables are missing or of another version), while reading and writing runs as usual. For tools
   * that must not install Docket into a file by accident, such as `docket gc`. Default `true`: `open()` migrates.
   */
  migrate?: boolean;
};

const KNOWN_OPTIONS = [
  'filename',
  'database',
  'busyTimeoutMs',
  'synchronous',
  'watchMs',
  'checkpointMs',
  'fileCheckMs',
  'readonly',
  'migrate',
];

/** Checks `sqliteStore`'s options; anything unknown or of the wrong type is `CONFIG_INVALID`. */
export function validateOptions(options: unknown): asserts options is SqliteStoreOptions {
  const fail = (message: string) => {
    throw new DocketError('CONFIG_INVALID', message, { operation: 'sqliteStore' });
  };
  if (typeof options !== 'object' || options === null) return fail('sqliteStore needs { filename } or { database }');
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) if (!KNOWN_OPTIONS.includes(key)) fail(`unknown option ${key}`);
  const hasFile = o.filename !== undefined;
  const hasDb = o.database !== undefined;
  if (hasFile === hasDb) fail('sqliteStore needs exactly one of filename and database');
  if (hasFile && (typeof o.filename !== 'string' || o.filename.length === 0)) {
    fail('filename must be a non-empty string');
  }
  if (hasDb && !(o.database instanceof Database)) fail('database must be a better-sqlite3 Database');
  if (o.busyTimeoutMs !== undefined && !isInteger(o.busyTimeoutMs, 0))
    fail('busyTimeoutMs must be a non-negative integer');
  if (o.readonly !== undefined && typeof o.readonly !== 'boolean') fail('readonly must be a boolean');
  if (o.migrate !== undefined && typeof o.migrate !== 'boolean') fail('migrate must be a boolean');
  if (o.readonly === true && !hasFile) fail('readonly needs filename');
  if (o.watchMs !== undefined && !isInteger(o.watchMs, 1)) fail('watchMs must be a positive integer');
  if (o.fileCheckMs !== undefined && !isInteger(o.fileCheckMs, 1)) fail('fileCheckMs must be a positive integer');
  if (o.checkpointMs !== undefined && !isInteger(o.checkpointMs, 0))
    fail('checkpointMs must be a non-negative integer');
  if (o.synchronous !== undefined && o.synchronous !== 'normal' && o.synchronous !== 'full') {
    fail("synchronous must be 'normal' or 'full'");
  }
}

function isInteger(value: unknown, min: number): boolean {
  return Number.isInteger(value) && (value as number) >= min;
}
