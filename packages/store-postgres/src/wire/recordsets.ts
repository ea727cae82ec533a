import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import type { Params } from './statement.js';

/** A column as a recordset declares it. */
export interface Column {
  name: string;
  type: string;
}

const columns = new WeakMap<PgTable, Column[]>();

/** A table's column names and SQL types, in table order. */
export function columnsOf(table: PgTable): Column[] {
  let found = columns.get(table);
  if (found === undefined) {
    found = getTableConfig(table).columns.map((c) => ({ name: c.name, type: c.getSQLType() }));
    columns.set(table, found);
  }
  return found;
}

const lists = new WeakMap<PgTable, Map<string, string>>();

/** `"a", "b", ...` for a table's columns, optionally prefixed by an alias (`v."a", ...`). */
export function columnList(table: PgTable, prefix = ''): string {
  let byPrefix = lists.get(table);
  if (byPrefix === undefined) {
    byPrefix = new Map();
    lists.set(table, byPrefix);
  }
  let list = byPrefix.get(prefix);
  if (list === undefined) {
    list = columnsOf(table)
      .map((c) => `${prefix}"${c.name}"`)
      .join(', ');
    byPrefix.set(prefix, list);
  }
  return list;
}

/**
 * Many rows as one parameter: `json_to_recordset($n::json) AS alias(column type, ...)`, typed by the table's own
 * columns. One statement then writes any number of rows, so a batch costs one round trip.
 */
export function recordset(params: Params, table: PgTable, rows: readonly object[], alias: string): string {
  const defs = columnsOf(table)
    .map((c) => `"${c.name}" ${c.type}`)
    .join(', ');
  return `json_to_recordset(${params.add(JSON.stringify(rows), 'json')}) AS ${alias}(${defs})`;
}

/**
 * Rows for one statement, split by column: a column whose value every row shares travels once, as a parameter
 * (`$n::type`); the others (and the `keep` columns, the keys the statement joins on) travel per row in a
 * `json_to_recordset`. A batch of claims or settles shares most of its values (status, reason, owner, time), so this
 * keeps the text the server must parse a fraction of the rows' size. The `count` rows are read through
 * `value(index, column)` (undefined reads as NULL), so a caller need not build an object per row first.
 * `column(name)` is the expression for a column.
 */
export function compactRows(
  params: Params,
  count: number,
  columns: readonly Column[],
  alias: string,
  keep: readonly string[],
  value: (index: number, column: string) => unknown,
): { from: string; column(name: string): string } {
  // Which columns vary is kept as flags beside `columns` rather than as new arrays and maps of columns: arrays built
  // here took different element kinds from call to call, and each new one threw this function's optimized code away.
  const n = columns.length;
  const varies = new Uint8Array(n);
  const shared: unknown[] = new Array(n).fill(null);
  const expressions: string[] = new Array(n).fill('');
  const keys: string[] = new Array(n).fill('');
  let defs = '';
  for (let ci = 0; ci < n; ci++) {
    const c = columns[ci] as Column;
    const first = count === 0 ? null : (value(0, c.name) ?? null);
    let differs = keep.includes(c.name);
    for (let i = 1; !differs && i < count; i++) differs = (value(i, c.name) ?? null) !== first;
    if (differs) {
      varies[ci] = 1;
      defs = defs === '' ? `"${c.name}" ${c.type}` : `${defs}, "${c.name}" ${c.type}`;
      expressions[ci] = `${alias}."${c.name}"`;
      keys[ci] = JSON.stringify(c.name);
    } else {
      shared[ci] = first;
    }
  }
  // The JSON text is written out here rather than built as one object per row and stringified: those objects took a
  // hidden class per set of varying columns (another reason the optimized code was thrown away), and were garbage
  // as soon as the text existed.
  let text = '[';
  for (let i = 0; i < count; i++) {
    let row = '';
    for (let ci = 0; ci < n; ci++) {
      if (varies[ci] === 0) continue;
      row += `${row === '' ? '{' : ','}${keys[ci]}:${jsonText(value(i, (columns[ci] as Column).name))}`;
    }
    text += `${i === 0 ? '' : ','}${row === '' ? '{' : row}}`;
  }
  text += ']';
  return {
    from: `json_to_recordset(${params.add(text, 'json')}) AS ${alias}(${defs})`,
    column(name) {
      for (let ci = 0; ci < n; ci++) {
        const c = columns[ci] as Column;
        if (c.name !== name) continue;
        if (expressions[ci] === '') expressions[ci] = params.add(shared[ci], c.type);
        return expressions[ci] as string;
      }
      return params.add(null, 'text');
    },
  };
}

/** `value` as JSON text, as `JSON.stringify` writes it in an object (`undefined` reads as `null`). */
function jsonText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      return JSON.stringify(value) ?? 'null';
  }
}
