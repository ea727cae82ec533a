import { type SQL, sql } from 'drizzle-orm';

/**
 * A statement as text with `$1, $2, ...` placeholders and their values. The hot paths (claims, settles, starts)
 * write one per batch as plain strings: building and rendering drizzle's SQL objects cost more than the rest of a
 * small batch's work in the process.
 */
export interface Statement {
  readonly text: string;
  readonly params: readonly unknown[];
}

/** The parameters of a statement being written: `add` answers the placeholder of one more value. */
export class Params {
  readonly values: unknown[] = [];

  /** The placeholder of `value`, cast to `type` when one is given. */
  add(value: unknown, type?: string): string {
    this.values.push(value);
    return type === undefined ? `$${this.values.length}` : `$${this.values.length}::${type}`;
  }
}

const PLACEHOLDER = /\$(\d+)/g;

/**
 * The statement as drizzle SQL, for the paths that run on a drizzle transaction (PGlite, effects). The text holds
 * identifiers, keywords and placeholders only, never a string literal, so every `$n` in it is a placeholder.
 */
export function toSql({ text, params }: Statement): SQL {
  const chunks: SQL[] = [];
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    chunks.push(sql.raw(text.slice(last, match.index)));
    chunks.push(sql`${sql.param(params[Number(match[1]) - 1])}`);
    last = match.index + match[0].length;
  }
  chunks.push(sql.raw(text.slice(last)));
  return sql.join(chunks);
}
