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
  const varying: Column[] = [];
  const shared = new Map<string, unknown>();
  for (let ci = 0; ci < columns.length; ci++) {
    const c = columns[ci] as Column;
    const first = count === 0 ? null : (value(0, c.name) ?? null);
    let differs = keep.includes(c.name);
    for (let i = 1; !differs && i < count; i++) differs = (value(i, c.name) ?? null) !== first;
    if (differs) varying.push(c);
    else shared.set(c.name, first);
  }
  const sent: Record<string, unknown>[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const out: Record<string, unknown> = {};
    for (let ci = 0; ci < varying.length; ci++) {
      const name = (varying[ci] as Column).name;
      out[name] = value(i, name) ?? null;
    }
    sent[i] = out;
  }
  const defs = varying.map((c) => `"${c.name}" ${c.type}`).join(', ');
  const expressions = new Map(varying.map((c) => [c.name, `${alias}."${c.name}"`]));
  const types = new Map(columns.map((c) => [c.name, c.type]));
  return {
    from: `json_to_recordset(${params.add(JSON.stringify(sent), 'json')}) AS ${alias}(${defs})`,
    column(name) {
      let expression = expressions.get(name);
      if (expression === undefined) {
        expression = params.add(shared.get(name) ?? null, types.get(name) ?? 'text');
        expressions.set(name, expression);
      }
      return expression;
    },
  };
}
