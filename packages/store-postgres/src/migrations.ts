import { fileURLToPath } from 'node:url';
import { DocketError } from '@docket/core';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type { PostgresConnection } from './connection.js';

/** The drizzle-kit output folder, found from `src/` and from `dist/`. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../drizzle', import.meta.url));

/**
 * Applies the drizzle-kit migrations in `schema` inside one transaction holding an advisory lock, reading what is
 * applied under that lock, so many processes starting at once migrate once. The generated SQL names no schema; the
 * transaction's `search_path` puts the tables in `schema`. A schema migrated by a newer Docket: `SCHEMA_MISMATCH`.
 * The transaction is the connection's own when it has one (its client goes back to the pool whatever fails, a lost
 * `BEGIN` included). `count` stops after the first `count` migrations (the tests build a schema as an older version
 * left it).
 */
export async function applyMigrations(
  connection: PostgresConnection,
  schema: string,
  count = Number.POSITIVE_INFINITY,
): Promise<void> {
  const migrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).slice(0, count);
  const newestKnown = newestOf(migrations);
  const transaction = connection.transaction ?? ((work) => connection.db.transaction(work));
  await transaction(async (tx) => {
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

/**
 * Checks, without creating or changing anything, that `schema` holds Docket's tables migrated by this version:
 * otherwise `SCHEMA_MISMATCH`, naming `docket migrate`. For stores opened with `migrate: false` (tools that only read).
 */
export async function assertMigrated(
  // biome-ignore lint/suspicious/noExplicitAny: any drizzle PG database.
  db: PgDatabase<PgQueryResultHKT, any>,
  schema: string,
): Promise<void> {
  const newestKnown = newestOf(readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }));
  const found = (await db.execute(
    sql`SELECT to_regclass(${`"${schema}".__docket_migrations`}) IS NOT NULL AS present`,
  )) as unknown as { rows: { present: boolean }[] };
  let applied: number | null = null;
  if (found.rows[0]?.present) {
    const result = (await db.execute(
      sql.raw(`SELECT max(created_at) AS at FROM "${schema}".__docket_migrations`),
    )) as unknown as { rows: { at: string | number | null }[] };
    applied = result.rows[0]?.at === null || result.rows[0]?.at === undefined ? null : Number(result.rows[0].at);
  }
  if (applied === newestKnown) return;
  throw new DocketError(
    'SCHEMA_MISMATCH',
    applied === null
      ? `schema ${schema} holds no Docket tables: create them with docket migrate (or a queue's ready())`
      : `schema ${schema} was migrated by another version of @docket/store-postgres: run docket migrate`,
    { operation: 'store.open', details: { schema, applied, newestKnown } },
  );
}

/** The time stamp of the newest of `migrations`: what a schema migrated by this version has applied last. */
function newestOf(migrations: readonly { folderMillis: number }[]): number {
  return Math.max(0, ...migrations.map((m) => m.folderMillis));
}
