import { fileURLToPath } from 'node:url';
import { DocketError } from '@docket/core';
import type Database from 'better-sqlite3';
import { readMigrationFiles } from 'drizzle-orm/migrator';

/** The drizzle-kit output folder; found relative to this file so it works from `src/` and from `dist/`. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle', import.meta.url));

/** Docket's own migrations table, apart from an application's `__drizzle_migrations` in the same file. */
export const MIGRATIONS_TABLE = '__docket_migrations';

/**
 * Applies the drizzle-kit migrations that are not applied yet, in one `BEGIN IMMEDIATE` transaction, reading what
 * is applied under that lock so that several processes opening one file at once migrate it once. Applying twice
 * does nothing. A file migrated by a newer Docket: `SCHEMA_MISMATCH`.
 */
export function applyMigrations(db: Database.Database): void {
  const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  const newestKnown = Math.max(0, ...migrations.map((m) => m.folderMillis));
  const run = db.transaction(() => {
    db.exec(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id INTEGER PRIMARY KEY AUTOINCREMENT, hash TEXT NOT NULL, created_at NUMERIC)`,
    );
    const last = db.prepare(`SELECT created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at DESC LIMIT 1`).get() as
      | { created_at: number }
      | undefined;
    const applied = last === undefined ? 0 : Number(last.created_at);
    if (applied > newestKnown) {
      throw new DocketError(
        'SCHEMA_MISMATCH',
        'this database was migrated by a newer version of @docket/store-sqlite; upgrade before opening it',
        { operation: 'store.open', details: { applied, newestKnown } },
      );
    }
    const record = db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES (?, ?)`);
    for (const migration of migrations) {
      if (migration.folderMillis <= applied) continue;
      for (const statement of migration.sql) if (statement.trim()) db.exec(statement);
      record.run(migration.hash, migration.folderMillis);
    }
  });
  run.immediate();
}

/** For a read-only connection: the file must already be migrated to exactly this version (`SCHEMA_MISMATCH`). */
export function assertMigrated(db: Database.Database): void {
  const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  const newestKnown = Math.max(0, ...migrations.map((m) => m.folderMillis));
  const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?").get(MIGRATIONS_TABLE);
  const last = table
    ? (db.prepare(`SELECT max(created_at) AS at FROM ${MIGRATIONS_TABLE}`).get() as { at: number | null }).at
    : null;
  if (last === null || Number(last) !== newestKnown) {
    throw new DocketError(
      'SCHEMA_MISMATCH',
      last === null
        ? 'this file is not a Docket database (no migrations applied)'
        : 'this database was migrated by another version of @docket/store-sqlite',
      { operation: 'store.open', details: { applied: last, newestKnown } },
    );
  }
}
