import { type SQL, sql } from 'drizzle-orm';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';

/**
 * Many rows as one parameter: `json_to_recordset($1::json) AS alias(column type, ...)`, typed by the drizzle table's
 * own columns (or the named subset of them), plus `extra` definitions. One statement then writes any number of rows,
 * so a batch costs one round trip.
 */
export function recordset(
  table: PgTable,
  rows: readonly object[],
  alias: string,
  options: { only?: readonly string[]; extra?: string } = {},
): SQL {
  const only = options.only === undefined ? null : new Set(options.only);
  const defs = columnsOf(table)
    .filter((c) => only === null || only.has(c.name))
    .map((c) => `"${c.name}" ${c.type}`);
  if (options.extra) defs.push(options.extra);
  return sql`json_to_recordset(${JSON.stringify(rows)}::json) AS ${sql.raw(alias)}(${sql.raw(defs.join(', '))})`;
}

const columns = new WeakMap<PgTable, { name: string; type: string }[]>();

/** A table's column names and SQL types, in table order. */
export function columnsOf(table: PgTable): { name: string; type: string }[] {
  let found = columns.get(table);
  if (found === undefined) {
    found = getTableConfig(table).columns.map((c) => ({ name: c.name, type: c.getSQLType() }));
    columns.set(table, found);
  }
  return found;
}

/** `"a", "b", ...` for a table's columns, optionally prefixed by an alias (`v."a", ...`). */
export function columnList(table: PgTable, prefix = ''): SQL {
  return sql.raw(
    columnsOf(table)
      .map((c) => `${prefix}"${c.name}"`)
      .join(', '),
  );
}
