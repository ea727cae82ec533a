import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle } from 'drizzle-orm/pglite';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { notifyText, preparedCall } from '../src/wire/prepared-calls.js';
import { toSql } from '../src/wire/statement.js';

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

/** Runs one simple-protocol message (as the store's one-round-trip messages are sent) and reads its last value. */
async function simpleQuery(): Promise<{ value(text: string): Promise<unknown>; close(): Promise<void> }> {
  if (DATABASE_URL) {
    const client = new pg.Client(DATABASE_URL);
    await client.connect();
    return {
      value: async (text) => {
        const results = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
        return (Array.isArray(results) ? results.at(-1) : results)?.rows[0].v;
      },
      close: () => client.end(),
    };
  }
  const lite = new PGlite();
  return {
    value: async (text) => ((await lite.exec(text)).at(-1)?.rows[0] as { v: unknown } | undefined)?.v,
    close: () => lite.close(),
  };
}

describe('preparedCall', () => {
  it('writes numbers, nulls, booleans and arrays as literals of one EXECUTE', () => {
    const call = preparedCall({ text: 'SELECT $1, $2, $3, $4::text[]', params: [1.5, null, true, ['a', 'b']] });
    expect(call.prepare).toBe(`PREPARE ${call.name} AS SELECT $1, $2, $3, $4::text[]`);
    // An array is one literal in PostgreSQL's array form, which the statement's cast reads.
    const array = ['$docket$', '{"a","b"}', '$docket$'].join('');
    expect(call.execute).toBe(`EXECUTE ${call.name}((1.5), NULL, TRUE, ${array})`);
    // One name per text, whatever the values: the statement is prepared once per connection.
    expect(preparedCall({ text: 'SELECT $1, $2, $3, $4::text[]', params: [2, 'x', false, []] }).name).toBe(call.name);
    expect(preparedCall({ text: 'SELECT $1', params: [1] }).name).not.toBe(call.name);
    expect(() => preparedCall({ text: 'SELECT $1', params: [Number.NaN] })).toThrow(/cannot write NaN/);
    expect(notifyText('docket_x', "it's")).toBe("SELECT pg_notify($docket$docket_x$docket$, $docket$it's$docket$)");
  });

  it('round-trips every tricky string through PostgreSQL unchanged (the server, or PGlite without one)', async () => {
    const read = await simpleQuery();
    try {
      for (const [i, text] of TRICKY.entries()) {
        // A text of its own per value, so each message prepares its statement once on this connection.
        const call = preparedCall({ text: `SELECT $1::text AS v, ${i} AS i`, params: [text] });
        expect(await read.value(`${call.prepare}; ${call.execute}`)).toBe(text);
      }
    } finally {
      await read.close();
    }
  });

  it('round-trips arrays of tricky strings, nulls and numbers through PostgreSQL unchanged', async () => {
    const read = await simpleQuery();
    try {
      const cases: [string, unknown[]][] = [
        ['text[]', [...TRICKY, null, 'NULL', '{a,b}', ' spaced ', '"quoted"', 'a,b']],
        ['text[]', []],
        ['double precision[]', [1.5, -2, 1796195787466, null]],
      ];
      for (const [i, [type, values]] of cases.entries()) {
        const call = preparedCall({
          text: `SELECT array_to_json($1::${type})::text AS v, ${i} AS i`,
          params: [values],
        });
        expect(JSON.parse((await read.value(`${call.prepare}; ${call.execute}`)) as string)).toEqual(values);
      }
    } finally {
      await read.close();
    }
  });
});

describe('toSql', () => {
  it('turns every placeholder into a parameter, in the order the numbers give, however many there are', async () => {
    const params = Array.from({ length: 12 }, (_, i) => `p${i + 1}`);
    // Placeholders out of order, one used twice, and two-digit numbers that a one-digit match would split.
    const text = `SELECT concat_ws(',', $12::text, $1::text, $10::text, $2::text, $1::text, $11::text) AS v,
      ${params.map((_, i) => `$${i + 1}::text`).join(' || ')} AS w`;
    const db = await drizzleDatabase();
    try {
      const { rows } = (await db.database.execute(toSql({ text, params }))) as unknown as { rows: unknown[] };
      expect(rows[0]).toEqual({ v: 'p12,p1,p10,p2,p1,p11', w: params.join('') });
    } finally {
      await db.close();
    }
  });
});

/** A drizzle database on the server, or on PGlite without one. */
async function drizzleDatabase() {
  if (DATABASE_URL) {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    return { database: drizzlePg({ client: pool }), close: () => pool.end() };
  }
  const lite = new PGlite();
  return { database: drizzle({ client: lite }), close: () => lite.close() };
}
