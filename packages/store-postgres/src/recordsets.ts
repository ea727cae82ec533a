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

/** A column as a recordset declares it. */
export interface Column {
  name: string;
  type: string;
}

/**
 * Rows for one statement, split by column: a column whose value every row shares travels once, as a parameter
 * (`$n::type`); the others (and the `keep` columns, the keys the statement joins on) travel per row in a
 * `json_to_recordset`. A batch of claims or settles shares most of its values (status, reason, owner, time), so this
 * keeps the text the server must parse a fraction of the rows' size. `column(name)` is the expression for a column.
 */
export function compactRows(
  rows: readonly Record<string, unknown>[],
  columns: readonly Column[],
  alias: string,
  keep: readonly string[],
): { from: SQL; column(name: string): SQL } {
  const first = rows[0] ?? {};
  const varying = columns.filter(
    (c) => keep.includes(c.name) || rows.some((row) => (row[c.name] ?? null) !== (first[c.name] ?? null)),
  );
  const isVarying = new Set(varying.map((c) => c.name));
  const types = new Map(columns.map((c) => [c.name, c.type]));
  const sent = rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const c of varying) out[c.name] = row[c.name] ?? null;
    return out;
  });
  const defs = varying.map((c) => `"${c.name}" ${c.type}`).join(', ');
  return {
    from: sql`json_to_recordset(${JSON.stringify(sent)}::json) AS ${sql.raw(alias)}(${sql.raw(defs)})`,
    column(name) {
      if (isVarying.has(name)) return sql.raw(`${alias}."${name}"`);
      return sql`${first[name] ?? null}::${sql.raw(types.get(name) ?? 'text')}`;
    },
  };
}
