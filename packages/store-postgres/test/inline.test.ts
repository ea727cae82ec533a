import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { inlineSql } from '../src/inline.js';

const DATABASE_URL = process.env.DOCKET_TEST_DATABASE_URL;

/** Strings that a quoting mistake would change: quotes, backslashes, the dollar tag and its prefixes, unicode. */
const TRICKY = [
  '',
  "it's",
  'back\\slash \\n',
  '$docket$ inside',
  'ends with $docket',
  'ends with $',
  '$1 and $2 look like parameters',
  'ünïcødé ✓ \u2028',
  JSON.stringify({ q: "a'b\\c$docket$" }),
];

/** Runs one simple-protocol query (as the store's one-round-trip messages are sent) and reads its one value. */
async function simpleQuery(): Promise<{ value(text: string): Promise<unknown>; close(): Promise<void> }> {
  if (DATABASE_URL) {
    const client = new pg.Client(DATABASE_URL);
    await client.connect();
    return { value: async (text) => (await client.query(text)).rows[0].v, close: () => client.end() };
  }
  const lite = new PGlite();
  return {
    value: async (text) => ((await lite.exec(text))[0]?.rows[0] as { v: unknown } | undefined)?.v,
    close: () => lite.close(),
  };
}

describe('inlineSql', () => {
  it('writes numbers, nulls, booleans and arrays as literals', () => {
    expect(inlineSql(sql`SELECT ${1.5}, ${null}, ${true}, ${sql.param(['a', 'b'])}::text[]`)).toBe(
      'SELECT (1.5), NULL, TRUE, ARRAY[$docket$a$docket$, $docket$b$docket$]::text[]',
    );
    expect(() => inlineSql(sql`SELECT ${Number.NaN}`)).toThrow(/cannot write NaN/);
  });

  it('round-trips every tricky string through PostgreSQL unchanged (the server, or PGlite without one)', async () => {
    const read = await simpleQuery();
    try {
      for (const text of TRICKY) expect(await read.value(inlineSql(sql`SELECT ${text}::text AS v`))).toBe(text);
    } finally {
      await read.close();
    }
  });
});
