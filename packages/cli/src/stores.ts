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

/** The store a command opens: PostgreSQL for a database URL, else the SQLite file; reads never migrate or write. */
export async function openCommandStore(
  target: { databaseUrl: string; schema?: string } | { file: string },
  writes: boolean,
  importer?: Importer,
): Promise<CommandStore> {
  if ('databaseUrl' in target) {
    const { postgresStore } = (await loadStore('postgres', importer)) as typeof import('@docket/store-postgres');
    return postgresStore({
      connectionString: target.databaseUrl,
      ...(target.schema ? { schema: target.schema } : {}),
      // Reads never create or migrate a schema: a mistyped --schema is SCHEMA_MISMATCH, not an empty one.
      ...(writes ? {} : { migrate: false }),
    });
  }
  const { sqliteStore } = (await loadStore('sqlite', importer)) as typeof import('@docket/store-sqlite');
  return sqliteStore(writes ? { filename: target.file } : { filename: target.file, readonly: true });
}
