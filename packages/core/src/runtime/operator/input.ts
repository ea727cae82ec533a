import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { RUN_STATUSES } from '../../machine/run-types.js';
import { DocketError } from '../../util/errors.js';
import { canonicalJson } from '../../util/json.js';
import { cleanText, formatIssues, nameSchema, strictObject } from '../../util/validation.js';
import type { Engine } from '../queue/engine.js';

/** What every part of the operator API shares: the engine, the queue's usability guard and its health probes. */
export interface OperatorScope {
  engine: Engine;
  assertUsable: (operation: string) => void;
  probes: () => string[];
}

const commandFields = {
  expectedRevision: v.pipe(v.number(), v.integer(), v.minValue(1)),
  reason: v.pipe(v.string(), v.minBytes(1), v.maxBytes(1024), cleanText),
  commandId: v.pipe(v.string(), v.minBytes(1), v.maxBytes(128), cleanText),
};
/** A run command's input. */
export const runCommandSchema = strictObject({ runId: v.string(), ...commandFields });
/** A task command's input (`tasks.pause|resume`). */
export const taskCommandSchema = strictObject({ task: nameSchema, ...commandFields });
/** A schedule's "run now" input: no revision, since it starts a run and leaves the schedule as it is. */
export const runNowSchema = strictObject({
  id: nameSchema,
  reason: commandFields.reason,
  commandId: commandFields.commandId,
});
/** A dead-letter replay's input. */
export const replaySchema = strictObject({
  eventId: v.pipe(v.string(), v.minLength(1), v.maxBytes(512), cleanText),
  ...commandFields,
});
/** `runs.list` options. */
export const listSchema = strictObject({
  taskName: v.optional(nameSchema),
  payloads: v.optional(v.boolean()),
  status: v.optional(v.picklist(RUN_STATUSES)),
  group: v.optional(v.pipe(v.string(), v.minLength(1), v.maxBytes(256), cleanText)),
  parentRunId: v.optional(v.pipe(v.string(), v.regex(/^[0-9a-f]{32}$/, 'must be a run id (32 lowercase hex)'))),
  idempotencyKey: v.optional(v.pipe(v.string(), v.minBytes(1), v.maxBytes(256))),
  scheduleId: v.optional(nameSchema),
  createdFrom: v.optional(v.pipe(v.string(), v.isoTimestamp())),
  createdTo: v.optional(v.pipe(v.string(), v.isoTimestamp())),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(200))),
  cursor: v.optional(v.string()),
});
/** `deadLetters.list` options. */
export const deadListSchema = strictObject({
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

/** The check sum a cursor carries over its own fields: any edit of them makes it `CURSOR_INVALID`. */
const cursorSum = (before: string, filterHash: string) => hash({ v: 2, b: before, f: filterHash }).slice(0, 16);

/**
 * An opaque cursor: the last id of a listing's slice, the hash of the namespace and filter it belongs to, and a check sum over
 * both. It continues only the listing it came from: another namespace, another filter or an edited cursor is refused.
 */
export function encodeCursor(last: string, filter: unknown): string {
  const f = hash(filter).slice(0, 16);
  return Buffer.from(JSON.stringify({ v: 2, b: last, f, s: cursorSum(last, f) })).toString('base64url');
}

/** The id a cursor continues below, or `CURSOR_INVALID` when it is malformed, edited or made for another listing. */
export function decodeCursor(cursor: string | undefined, filter: unknown, operation: string): string | null {
  if (cursor === undefined) return null;
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    const { v, b, f, s } = decoded;
    const f16 = hash(filter).slice(0, 16);
    if (v === 2 && typeof b === 'string' && f === f16 && s === cursorSum(b, f16) && Object.keys(decoded).length === 4) {
      return b;
    }
  } catch {
    // falls through to the error below
  }
  throw new DocketError('CURSOR_INVALID', 'this cursor is malformed, was edited, or belongs to another listing', {
    operation,
  });
}

/** One slice of a listing read with `limit + 1` rows: the first `limit`, and the cursor to the rest, if any. */
export function sliceOf<T>(
  rows: readonly T[],
  limit: number,
  idOf: (row: T) => string,
  filter: unknown,
): { slice: T[]; nextCursor: string | null } {
  const slice = rows.slice(0, limit);
  const last = slice.at(-1);
  return { slice, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(idOf(last), filter) : null };
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
): { filter: F & { namespace: string }; before: string | null; limit: number } {
  scope.assertUsable(operation);
  const o = parse(schema, options, operation);
  // The namespace is part of every listing's filter: a cursor never continues another namespace's listing.
  const filter = { namespace: scope.engine.namespace, ...filterOf(o) };
  return { filter, before: decodeCursor(o.cursor, filter, operation), limit: o.limit ?? 50 };
}
