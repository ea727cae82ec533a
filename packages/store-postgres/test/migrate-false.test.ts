import { DocketError } from '@docket/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { backend, freshSchema } from './helpers.js';

let db: Awaited<ReturnType<typeof backend>>;
beforeAll(async () => {
  db = await backend();
});
afterAll(() => db.close());

const schemaExists = async (schema: string) =>
  (await db.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).length > 0;

describe('postgresStore({ migrate: false })', () => {
  it('refuses a schema without Docket tables with SCHEMA_MISMATCH, naming docket migrate, and creates nothing', async () => {
    const schema = freshSchema();
    const store = postgresStore({ ...db.options(schema), migrate: false });
    const error = await store.open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DocketError);
    expect(error).toMatchObject({ code: 'SCHEMA_MISMATCH', details: { schema, applied: null } });
    expect((error as Error).message).toMatch(/docket migrate/);
    expect(await schemaExists(schema)).toBe(false);
  });

  it('opens a migrated schema and reads it without writing anything', async () => {
    const schema = freshSchema();
    const migrating = postgresStore(db.options(schema));
    await migrating.open();
    await migrating.close();
    const before = await db.query(`SELECT count(*) AS n FROM "${schema}".__docket_migrations`);
    const reader = postgresStore({ ...db.options(schema), migrate: false });
    await reader.open();
    expect(await reader.getRun('default', '0'.repeat(32))).toBeNull();
    await reader.close();
    expect(await db.query(`SELECT count(*) AS n FROM "${schema}".__docket_migrations`)).toEqual(before);
    await db.query(`DROP SCHEMA "${schema}" CASCADE`);
  });

  it('refuses a migrate that is not a boolean', () => {
    expect(() => postgresStore({ connectionString: 'postgres://x', migrate: 'no' } as never)).toThrow(
      /migrate must be a boolean/,
    );
  });
});
