import { DocketError } from '@docket/core';
import type { Statement } from './statement.js';

// Statements with their values written in as literals: several statements (`BEGIN; ...; COMMIT`) then travel in one
// simple-protocol message, one round trip for a whole transaction.

/** `SELECT pg_notify(channel, payload)` as plain text. */
export const notifyText = (channel: string, payload: string): string =>
  `SELECT pg_notify(${literal(channel)}, ${literal(payload)})`;

/**
 * A string literal. Dollar quoting needs no escaping (the rows of a batch travel as one long JSON text); a text that
 * holds the tag itself falls back to `E'...'`, which reads the same whatever `standard_conforming_strings` says.
 */
function quote(text: string): string {
  // A NUL would end the message early and break the protocol (the server drops the connection): refused as input.
  if (text.includes('\u0000')) {
    throw new DocketError('CONFIG_INVALID', 'PostgreSQL text cannot hold a NUL character', { operation: 'store' });
  }
  // `$docket` anywhere (the tag, or a text ending in `$docket` that the closing tag would complete) falls back.
  if (!text.includes('$docket')) return `${TAG}${text}${TAG}`;
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}
const TAG = '$docket$';

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`internal: cannot write ${value} into SQL`);
    return `(${value})`;
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (Array.isArray(value)) return quote(arrayText(value));
  throw new Error(`internal: cannot write a ${typeof value} into SQL`);
}

/**
 * An array in PostgreSQL's array text form (`{"a","b",NULL}`), written as one string literal that the statement's
 * cast (`$n::text[]`) reads: a batch's run ids are one literal, not one quoted literal each inside `ARRAY[...]`.
 */
function arrayText(values: readonly unknown[]): string {
  let text = '';
  for (const value of values) {
    text = text.length === 0 ? `{${element(value)}` : `${text},${element(value)}`;
  }
  return text.length === 0 ? '{}' : `${text}}`;
}

/** One element of `arrayText`: strings always in double quotes (backslash and quote escaped), numbers bare. */
function element(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string')
    return ARRAY_SPECIAL.test(value) ? `"${value.replace(ARRAY_ESCAPE, '\\$&')}"` : `"${value}"`;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`internal: cannot write ${value} into SQL`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  throw new Error(`internal: cannot write a ${typeof value} into an SQL array`);
}
const ARRAY_SPECIAL = /["\\]/;
const ARRAY_ESCAPE = /["\\]/g;

/** A prepared statement's name, its `PREPARE` text and the `EXECUTE` text of one call. */
export interface PreparedCall {
  name: string;
  prepare: string;
  execute: string;
}

/**
 * A statement as a call of a prepared statement: `PREPARE` text (needed once per connection) and the
 * `EXECUTE name(literals)` text. The server plans a prepared statement once per connection instead of every time,
 * which is most of the cost of a small batch.
 */
export function preparedCall({ text, params }: Statement): PreparedCall {
  let named = names.get(text);
  if (named === undefined) {
    const name = `docket_${hash(text)}`;
    named = { name, prepare: `PREPARE ${name} AS ${text}` };
    // A few dozen texts recur (one per statement and set of columns); anything past this is not worth keeping.
    if (names.size >= 1_000) names.clear();
    names.set(text, named);
  }
  return { ...named, execute: executeText(named.name, params) };
}

/** Names and `PREPARE` texts of the statement texts seen, so a text that recurs is not hashed again. */
const names = new Map<string, Omit<PreparedCall, 'execute'>>();

/** `EXECUTE name(literals)`: one call of the prepared statement `name` with `params`. */
function executeText(name: string, params: readonly unknown[]): string {
  if (params.length === 0) return `EXECUTE ${name}`;
  // Concatenated, not joined, for the same reason as in `compose`: a batch's literal is copied once, when written.
  let list = literal(params[0]);
  for (let i = 1; i < params.length; i++) list = `${list}, ${literal(params[i])}`;
  return `EXECUTE ${name}(${list})`;
}

/** A short stable hash of a statement's text (FNV-1a, 32 bits, twice with different seeds). */
function hash(text: string): string {
  // 32-bit integers from the start (`| 0`; the bits are the same): a seed above 2^31 would leave the small-integer range.
  let a = 0x811c9dc5 | 0;
  let b = 0x01000193 | 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return (a >>> 0).toString(36) + (b >>> 0).toString(36);
}
