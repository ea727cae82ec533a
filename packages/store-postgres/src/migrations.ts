import { fileURLToPath } from 'node:url';
import { DocketError } from '@docket/core';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/** The drizzle-kit output folder, found from `src/` and from `dist/`. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle', import.meta.url));

/**
 * Applies the drizzle-kit migrations in `schema` inside one transaction holding an advisory lock, reading what is
 * applied under that lock, so many processes starting at once migrate once. The generated SQL names no schema; the
 * transaction's `search_path` puts the tables in `schema`. A schema migrated by a newer Docket: `SCHEMA_MISMATCH`.
 * `count` stops after the first `count` migrations (the tests build a schema as an older version left it).
 */
export async function applyMigrations(
  // biome-ignore lint/suspicious/noExplicitAny: any drizzle PG database.
  db: PgDatabase<PgQueryResultHKT, any>,
  schema: string,
  count = Number.POSITIVE_INFINITY,
): Promise<void> {
  const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).slice(0, count);
  const newestKnown = Math.max(0, ...migrations.map((m) => m.folderMillis));
  await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`docket:migrate:${schema}`}, 0))`);
    await tx.execute(sql.raw(`CREATE SCHEMA IF NOT EXISTS "${schema}"`));
    await tx.execute(sql.raw(`SET LOCAL search_path TO "${schema}"`));
    await tx.execute(
      sql.raw(
        'CREATE TABLE IF NOT EXISTS __docket_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)',
      ),
    );
    const result = (await tx.execute(sql.raw('SELECT max(created_at) AS at FROM __docket_migrations'))) as unknown as {
      rows: { at: string | number | null }[];
    };
    const applied = Number(result.rows[0]?.at ?? 0);
    if (applied > newestKnown) {
      throw new DocketError(
        'SCHEMA_MISMATCH',
        `schema ${schema} was migrated by a newer version of @docket/store-postgres`,
        {
          operation: 'store.open',
          details: { applied, newestKnown },
        },
      );
    }
    for (const migration of migrations) {
      if (migration.folderMillis <= applied) continue;
      for (const statement of migration.sql) if (statement.trim()) await tx.execute(sql.raw(statement));
      await tx.execute(
        sql`INSERT INTO __docket_migrations (hash, created_at) VALUES (${migration.hash}, ${migration.folderMillis})`,
      );
    }
  });
}
