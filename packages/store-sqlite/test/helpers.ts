import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConformanceHarness } from '@docket/core/conformance';
import Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { type SqliteStore, type SqliteTransaction, sqliteStore } from '../src/index.js';

/** A fresh directory under the OS temp dir, removed by the returned cleanup. */
export function tempDir(prefix = 'docket-sqlite-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A store on a new real file, and the raw connection to that file; `cleanups` gets what closes the connection and
 * removes the file.
 */
export function fileStore(cleanups: (() => Promise<void> | void)[]): { db: Database.Database; store: SqliteStore } {
  const tmp = tempDir();
  const db = new Database(join(tmp.dir, 'docket.sqlite'));
  cleanups.push(tmp.remove, () => void db.close());
  return { db, store: sqliteStore({ database: db }) };
}

/** The application table the conformance suite's effects write: no unique key, so duplicates would show. */
export const APP_TABLE_SQL =
  'CREATE TABLE IF NOT EXISTS app_rows (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL)';

/** A conformance harness on a real SQLite file (or `:memory:`), with a second connection and raw readers. */
export async function sqliteHarness(kind: 'file' | 'memory'): Promise<ConformanceHarness<SqliteTransaction>> {
  const tmp = tempDir();
  const filename = kind === 'file' ? join(tmp.dir, 'docket.sqlite') : ':memory:';
  const appDb = new Database(filename);
  appDb.exec(APP_TABLE_SQL);
  const store = sqliteStore({ database: appDb });
  const seconds: Database.Database[] = [];
  const rawDb = kind === 'file' ? new Database(filename, { readonly: false }) : appDb;
  return {
    store,
    secondStore: () => {
      if (kind === 'memory') return store;
      const db = new Database(filename);
      seconds.push(db);
      return sqliteStore({ database: db });
    },
    writeAppRow: (tx, key) => {
      tx.run(sql`INSERT INTO app_rows (key) VALUES (${key})`);
    },
    countAppRows: async (key) =>
      (rawDb.prepare('SELECT count(*) AS n FROM app_rows WHERE key = ?').get(key) as { n: number }).n,
    raw: {
      run: async (runId) =>
        (rawDb.prepare('SELECT status, revision FROM docket_runs WHERE run_id = ?').get(runId) as
          | { status: string; revision: number }
          | undefined) ?? null,
      historyCount: async (runId) =>
        (rawDb.prepare('SELECT count(*) AS n FROM docket_history WHERE run_id = ?').get(runId) as { n: number }).n,
    },
    cleanup: async () => {
      for (const db of seconds) db.close();
      if (rawDb !== appDb) rawDb.close();
      appDb.close();
      tmp.remove();
    },
  };
}
