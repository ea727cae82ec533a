import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { RUN_STATUSES } from '../machine/run-types.js';
import { DocketError } from '../util/errors.js';
import { canonicalJson } from '../util/json.js';
import { formatIssues, nameSchema } from '../util/validation.js';
import type { Engine } from './engine.js';

/** What every part of the operator API shares: the engine, the queue's usability guard and its health probes. */
export interface OperatorScope {
  engine: Engine;
  assertUsable: (operation: string) => void;
  probes: () => string[];
}

const commandFields = {
  expectedRevision: v.pipe(v.number(), v.integer(), v.minValue(1)),
  reason: v.pipe(v.string(), v.minBytes(1), v.maxBytes(1024)),
  commandId: v.pipe(v.string(), v.minBytes(1), v.maxBytes(128)),
};
/** A run command's input. */
export const runCommandSchema = v.strictObject({ runId: v.string(), ...commandFields });
/** A dead-letter replay's input. */
export const replaySchema = v.strictObject({
  eventId: v.pipe(v.string(), v.minLength(1), v.maxBytes(512)),
  ...commandFields,
});
/** `runs.list` options. */
export const listSchema = v.strictObject({
  taskName: v.optional(nameSchema),
  status: v.optional(v.picklist(RUN_STATUSES)),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(200))),
  cursor: v.optional(v.string()),
});
/** `deadLetters.list` options. */
export const deadListSchema = v.strictObject({
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(200))),
  cursor: v.optional(v.string()),
});

/** Parses an operator input; anything else is `CONFIG_INVALID` with the issues. */
export function parse<T extends v.GenericSchema>(schema: T, input: unknown, operation: string): v.InferOutput<T> {
  const parsed = v.safeParse(schema, input ?? {});
  if (!parsed.success) {
    const issues = formatIssues(parsed.issues);
    throw new DocketError('CONFIG_INVALID', `invalid ${operation} input: ${issues[0]?.path}: ${issues[0]?.message}`, {
      operation,
      details: { issues },
    });
  }
  return parsed.output;
}

/** The SHA-256 of a value's canonical JSON: a command's request hash. */
export const hash = (value: unknown) => createHash('sha256').update(canonicalJson(value)).digest('hex');

/** An opaque cursor: the last id of a page and the hash of the filter it belongs to. */
function encodeCursor(after: string, filter: unknown): string {
  return Buffer.from(JSON.stringify({ v: 1, a: after, f: hash(filter).slice(0, 16) })).toString('base64url');
}

/** The id a cursor continues after, or `CURSOR_INVALID` when it is malformed or made for another filter. */
export function decodeCursor(cursor: string | undefined, filter: unknown, operation: string): string | null {
  if (cursor === undefined) return null;
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      v?: number;
      a?: unknown;
      f?: unknown;
    };
    if (decoded.v === 1 && typeof decoded.a === 'string' && decoded.f === hash(filter).slice(0, 16)) return decoded.a;
  } catch {
    // falls through to the error below
  }
  throw new DocketError('CURSOR_INVALID', 'this cursor is malformed or belongs to another query', { operation });
}

/** One page of a listing read with `limit + 1` rows: the first `limit`, and the cursor to the rest, if any. */
export function pageOf<T>(
  rows: readonly T[],
  limit: number,
  idOf: (row: T) => string,
  filter: unknown,
): { page: T[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(idOf(last), filter) : null };
}

/**
 * The start of a listing: the queue usable, its options parsed, the filter they name, and the id the cursor
 * continues after (checked against that filter), with the page size (default 50).
 */
export function listRequest<T extends v.GenericSchema<unknown, { limit?: number; cursor?: string }>, F>(
  scope: OperatorScope,
  operation: string,
  schema: T,
  options: unknown,
  filterOf: (options: v.InferOutput<T>) => F,
): { filter: F; after: string | null; limit: number } {
  scope.assertUsable(operation);
  const o = parse(schema, options, operation);
  const filter = filterOf(o);
  return { filter, after: decodeCursor(o.cursor, filter, operation), limit: o.limit ?? 50 };
}
