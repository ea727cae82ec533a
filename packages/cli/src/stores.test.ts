import { isDocketError } from '@docket/core';
import { describe, expect, it } from 'vitest';
import { loadStore, openCommandStore } from './stores.js';

/** An importer for a machine where the named package is not installed, as Node reports it. */
const without = (missing: string) => async (specifier: string) => {
  if (specifier === missing)
    throw Object.assign(new Error(`Cannot find package '${specifier}'`), { code: 'ERR_MODULE_NOT_FOUND' });
  return import(specifier);
};

describe('the store a command loads', () => {
  it('loads only the package its flag names', async () => {
    const loaded: string[] = [];
    const recording = async (specifier: string) => {
      loaded.push(specifier);
      return import(specifier);
    };
    await openCommandStore({ databaseUrl: 'postgres://127.0.0.1:1/none' }, 'read', recording);
    expect(loaded).toEqual(['@docket/store-postgres']);
  });

  it('says which packages to install when the store package is missing', async () => {
    const error = await openCommandStore(
      { databaseUrl: 'postgres://x' },
      'read',
      without('@docket/store-postgres'),
    ).catch((e: unknown) => e);
    expect(isDocketError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toBe(
      '--database-url needs @docket/store-postgres, which is not installed: npm install @docket/store-postgres pg drizzle-orm',
    );
    const sqlite = await loadStore('sqlite', without('@docket/store-sqlite')).catch((e: unknown) => e);
    expect((sqlite as Error).message).toMatch(
      /--db needs @docket\/store-sqlite.*npm install @docket\/store-sqlite better-sqlite3/,
    );
  });

  it('passes other import failures through', async () => {
    const broken = async () => {
      throw new SyntaxError('broken package');
    };
    await expect(loadStore('sqlite', broken)).rejects.toThrow(SyntaxError);
  });
});
