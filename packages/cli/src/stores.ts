import { DocketError, type Store } from '@docket/core';
import type { PostgresTransaction } from '@docket/store-postgres';
import type { SqliteTransaction } from '@docket/store-sqlite';

/** The store of a command: either kind, chosen by its flags. */
export type CommandStore = Store<SqliteTransaction> | Store<PostgresTransaction>;

/** How a store package is imported: `import()` itself, or a stand-in in tests. */
export type Importer = (specifier: string) => Promise<unknown>;

const nativeImport: Importer = (specifier) => import(specifier);

/** What each store needs installed beside the CLI. */
const PACKAGES = {
  sqlite: { name: '@docket/store-sqlite', install: '@docket/store-sqlite better-sqlite3 drizzle-orm', flag: '--db' },
  postgres: {
    name: '@docket/store-postgres',
    install: '@docket/store-postgres pg drizzle-orm',
    flag: '--database-url',
  },
} as const;

/**
 * Loads the one store package the command's flag names, and only it: a PostgreSQL user never needs better-sqlite3
 * built, nor a SQLite user pg. A missing package is `CONFIG_INVALID`, naming what to install.
 */
export async function loadStore(kind: keyof typeof PACKAGES, importer: Importer = nativeImport): Promise<unknown> {
  const wanted = PACKAGES[kind];
  try {
    return await importer(wanted.name);
  } catch (error) {
    const code = (error as { code?: unknown })?.code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new DocketError(
      'CONFIG_INVALID',
      `${wanted.flag} needs ${wanted.name}, which is not installed: npm install ${wanted.install}`,
      { operation: 'docket', cause: error, details: { package: wanted.name } },
    );
  }
}

/**
 * What a command may do to the store: `read` (never migrates or writes), `write` (writes runs, never creates or
 * migrates Docket's tables: a file or schema without them is `SCHEMA_MISMATCH`), or `migrate` (`docket migrate`).
 */
export type StoreAccess = 'read' | 'write' | 'migrate';

/** The store a command opens: PostgreSQL for a database URL, else the SQLite file, with the access it needs. */
export async function openCommandStore(
  target: { databaseUrl: string; schema?: string } | { file: string },
  access: StoreAccess,
  importer?: Importer,
): Promise<CommandStore> {
  if ('databaseUrl' in target) {
    const { postgresStore } = (await loadStore('postgres', importer)) as typeof import('@docket/store-postgres');
    return postgresStore({
      connectionString: target.databaseUrl,
      ...(target.schema ? { schema: target.schema } : {}),
      // Only `docket migrate` creates or upgrades a schema: a mistyped --schema is SCHEMA_MISMATCH, not a new one.
      ...(access === 'migrate' ? {} : { migrate: false }),
    });
  }
  const { sqliteStore } = (await loadStore('sqlite', importer)) as typeof import('@docket/store-sqlite');
  if (access === 'read') return sqliteStore({ filename: target.file, readonly: true });
  return sqliteStore(access === 'write' ? { filename: target.file, migrate: false } : { filename: target.file });
}
