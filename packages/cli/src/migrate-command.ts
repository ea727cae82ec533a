import { existsSync } from 'node:fs';
import { isDocketError } from '@docket/core';
import { openCommandStore } from './stores.js';

/** Where `docket migrate` works: a PostgreSQL schema or a SQLite file. */
export type MigrateTarget = { databaseUrl: string; schema?: string } | { file: string };

/**
 * `docket migrate [--dry-run]`: the one command that creates or upgrades Docket's tables. It first opens the store
 * without migrating; up to date, it says so. Otherwise `--dry-run` says why it would migrate, and without it the
 * store is opened once with its migrations (a file or schema of a newer Docket stays `SCHEMA_MISMATCH`).
 */
export async function migrateCommand(
  target: MigrateTarget,
  dryRun: boolean,
  print: (value: unknown, human: () => string) => void,
): Promise<number> {
  const where = 'file' in target ? target.file : `schema ${target.schema ?? 'docket'}`;
  let reason = 'file' in target && !existsSync(target.file) ? 'the file does not exist yet' : null;
  if (reason === null) {
    const current = await openCommandStore(target, 'read');
    try {
      await current.open();
      await current.close();
      print({ migrated: false, upToDate: true }, () => `${where} is up to date: nothing to migrate`);
      return 0;
    } catch (error) {
      if (!isDocketError(error, 'SCHEMA_MISMATCH')) throw error;
      reason = error.message;
    }
  }
  if (dryRun) {
    print({ migrated: false, upToDate: false, reason }, () => `would migrate ${where}: ${reason}`);
    return 0;
  }
  const store = await openCommandStore(target, 'migrate');
  await store.open();
  await store.close();
  print({ migrated: true, upToDate: true }, () => `migrated ${where}`);
  return 0;
}
