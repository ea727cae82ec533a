import { DocketError } from '@docket/core';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';

/** The error `fn` throws, for asserting its code and message. */
function thrown(fn: () => unknown): DocketError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DocketError);
    return error as DocketError;
  }
  throw new Error('expected a DocketError');
}

describe('postgresStore options', () => {
  it('needs exactly one connection option', () => {
    expect(thrown(() => postgresStore({} as never)).code).toBe('CONFIG_INVALID');
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    const both = thrown(() => postgresStore({ connectionString: 'postgres://x', pool } as never));
    expect(both).toMatchObject({ code: 'CONFIG_INVALID', operation: 'postgresStore' });
    expect(both.message).toMatch(/exactly one of connectionString, pool \(or client\) and pglite/);
    void pool.end();
  });

  it('refuses unknown options, a bad schema name, a connection string that is not a string and a holdClaims that is not a boolean', () => {
    expect(thrown(() => postgresStore({ connectionString: 'postgres://x', scheme: 'a' } as never)).message).toMatch(
      /unknown option scheme/,
    );
    expect(thrown(() => postgresStore({ connectionString: 'postgres://x', schema: 'Bad-Name' })).code).toBe(
      'CONFIG_INVALID',
    );
    expect(thrown(() => postgresStore({ connectionString: 42 } as never)).message).toMatch(/must be a string/);
    expect(thrown(() => postgresStore({ connectionString: 'postgres://x', holdClaims: 'yes' } as never))).toMatchObject(
      { code: 'CONFIG_INVALID', details: { path: 'holdClaims' } },
    );
  });

  it('takes a pg Pool as pool or as client, and refuses a single pg Client with the reason', () => {
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    expect(postgresStore({ pool }).name).toBe('postgres');
    expect(postgresStore({ client: pool }).name).toBe('postgres');
    const single = new pg.Client({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    const refused = thrown(() => postgresStore({ client: single as never }));
    expect(refused).toMatchObject({ code: 'CONFIG_INVALID', details: { path: 'client' } });
    expect(refused.message).toMatch(/pass a pg Pool/);
    void pool.end();
  });

  it('answers CONNECTION_UNAVAILABLE when no server listens, and writes nothing', async () => {
    const store = postgresStore({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    await expect(store.open()).rejects.toMatchObject({ code: 'CONNECTION_UNAVAILABLE', operation: 'store.open' });
    await expect(store.getRun('default', 'x')).rejects.toMatchObject({ code: 'CONNECTION_UNAVAILABLE' });
  });
});
