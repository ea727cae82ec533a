import { describe, expect, it } from 'vitest';
import { compactRows } from '../src/wire/recordsets.js';
import { Params } from '../src/wire/statement.js';

describe('compactRows', () => {
  const columns = [
    { name: 'id', type: 'text' },
    { name: 'n', type: 'double precision' },
    { name: 'flag', type: 'boolean' },
    { name: 'note', type: 'text' },
    { name: 'same', type: 'text' },
  ];
  const rows: Record<string, unknown>[] = [
    { id: 'a', n: 1.5, flag: true, note: 'quote " backslash \\ newline \n tab \t', same: 'x' },
    { id: 'b', n: -0, flag: false, note: 'unicode é 漢 \u2028 \u0000', same: 'x' },
    { id: 'c', n: Number.NaN, flag: null, note: undefined, same: 'x' },
    { id: 'd', n: 1e21, flag: true, note: '{"json":"as text"}', same: 'x' },
  ];

  it('sends the varying columns as the JSON that JSON.stringify writes, and a shared one once', () => {
    const params = new Params();
    const v = compactRows(params, rows.length, columns, 'v', ['id'], (i, c) => rows[i]?.[c]);
    const sent = JSON.parse(params.values[0] as string);
    const expected = rows.map(({ id, n, flag, note }) =>
      JSON.parse(JSON.stringify({ id, n, flag, note: note ?? null })),
    );
    expect(sent).toEqual(expected);
    expect(params.values[0]).toBe(JSON.stringify(expected));
    expect(v.from).toBe(
      'json_to_recordset($1::json) AS v("id" text, "n" double precision, "flag" boolean, "note" text)',
    );
    expect(v.column('note')).toBe('v."note"');
    // The column every row shares is one parameter, not a recordset column.
    expect(v.column('same')).toBe('$2::text');
    expect(params.values[1]).toBe('x');
  });

  it('keeps the key column in the recordset even when every row shares it, and writes no row for none', () => {
    const params = new Params();
    const v = compactRows(params, 2, columns.slice(0, 2), 'v', ['id'], (_i, c) => (c === 'id' ? 'same-id' : 7));
    expect(params.values[0]).toBe('[{"id":"same-id"},{"id":"same-id"}]');
    expect(v.column('n')).toBe('$2::double precision');
    const empty = new Params();
    compactRows(empty, 0, columns, 'x', ['id'], () => undefined);
    expect(empty.values[0]).toBe('[]');
  });
});
