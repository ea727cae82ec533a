import * as v from 'valibot';
import type { HistoryEntry } from '../../machine/run-types.js';
import type { StoredChange } from '../../store/changes.js';
import { DocketError } from '../../util/errors.js';
import { nameSchema, strictObject } from '../../util/validation.js';
import type { Engine } from '../queue/engine.js';
import { decodeCursor, encodeCursor, parse } from './input.js';

/** One entry of the changes feed: a run's history entry with the run's id and task. */
export interface Change {
  runId: string;
  task: { name: string; version: string };
  seq: number;
  from: HistoryEntry['from'];
  to: HistoryEntry['to'];
  reason: HistoryEntry['reason'];
  actor: string;
  at: string;
}

/** What `operator.changes` answers: entries in commit order and the cursor to ask again with (always one). */
export interface ChangesPage {
  items: Change[];
  next: string;
}

/** The options of `operator.changes`. */
export interface ChangesOptions {
  /** A cursor from an earlier `next`; none: from the oldest entry kept. */
  after?: string;
  /** 1..1000, default 100. */
  limit?: number;
  /** Only this task's entries (the cursor is then bound to this filter). */
  taskName?: string;
  /** Without `after`: `'oldest'` (the default) reads from the oldest entry kept; `'now'` answers no item and the cursor after the newest entry. */
  from?: 'oldest' | 'now';
}

/** `operator.changes` options. */
const changesSchema = strictObject({
  after: v.optional(v.string()),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000))),
  taskName: v.optional(nameSchema),
  from: v.optional(v.picklist(['oldest', 'now'])),
});

/** A feed cursor's filter: the namespace and task, so a cursor continues only the feed it came from. */
const feedFilter = (namespace: string, taskName: string | null) => ({ namespace, feed: 1, taskName });

/** The public shape of a stored change. */
export const changeOf = (c: StoredChange): Change => ({
  runId: c.runId,
  task: { name: c.taskName, version: c.taskVersion },
  seq: c.entry.seq,
  from: c.entry.from,
  to: c.entry.to,
  reason: c.entry.reason,
  actor: c.entry.actor,
  at: c.entry.at,
});

/** A feed read: the page's stored changes and the cursor after each of them, with the page's `next`. */
export interface FeedSlice {
  changes: StoredChange[];
  cursors: string[];
  next: string;
  /** The position `next` stands for, `null` when the read moved nothing. */
  nextPosition: number | null;
  /** Whether more entries may follow at once (a full page, or a store's window that stopped before the end). */
  more: boolean;
}

/** A checked feed request: the store's request, the cursor's filter, and the cursor as given. */
export interface FeedRequest {
  taskName: string | null;
  after: number | null;
  limit: number;
  filter: ReturnType<typeof feedFilter>;
  given: string | undefined;
  /** Start after the newest entry (no `after` given). */
  fromNow: boolean;
}

/** Checks feed options now: `CONFIG_INVALID` for bad options, `CURSOR_INVALID` for a cursor of another feed. */
export function feedRequest(engine: Engine, options: unknown, operation: string): FeedRequest {
  const o = parse(changesSchema, options, operation);
  if (o.from !== undefined && o.after !== undefined) {
    throw new DocketError('CONFIG_INVALID', `invalid ${operation} input: from and after cannot both be given`, {
      operation,
    });
  }
  const filter = feedFilter(engine.namespace, o.taskName ?? null);
  const decoded = decodeCursor(o.after, filter, operation);
  const after = decoded === null ? null : positionOf(decoded, operation);
  const fromNow = o.from === 'now';
  return { taskName: o.taskName ?? null, after, limit: o.limit ?? 100, filter, given: o.after, fromNow };
}

/**
 * Reads one slice of the namespace's feed; `CURSOR_EXPIRED` when retention removed entries after the cursor. A
 * request `from: 'now'` answers no entry and the cursor after the newest one (`fromHead`).
 */
export async function readFeed(engine: Engine, request: FeedRequest, operation: string): Promise<FeedSlice> {
  if (request.fromNow) {
    const head = await fromHead(engine, request);
    return { changes: [], cursors: [], next: head.given as string, nextPosition: head.after, more: false };
  }
  const { taskName, after, limit, filter } = request;
  const answer = await engine.store.readChanges({ namespace: engine.namespace, taskName, after, limit });
  const { changes, floor } = answer;
  if (after !== null && after < floor) {
    throw new DocketError('CURSOR_EXPIRED', 'retention removed changes after this cursor: read from the oldest kept', {
      operation,
      details: { floor },
    });
  }
  const cursors = changes.map((c) => encodeCursor(String(c.position), filter));
  const more = changes.length === limit || answer.more === true;
  if (answer.through !== undefined) {
    return { changes, cursors, next: encodeCursor(String(answer.through), filter), nextPosition: answer.through, more };
  }
  const last = changes.at(-1)?.position ?? null;
  const next = cursors.at(-1) ?? request.given ?? encodeCursor(String(floor), filter);
  return { changes, cursors, next, nextPosition: last ?? after, more };
}

/** The same feed request, continuing after the newest entry now: where `from: 'now'` starts. */
export async function fromHead(engine: Engine, request: FeedRequest): Promise<FeedRequest> {
  const position = await engine.store.changesHead(engine.namespace);
  return { ...request, after: position, given: encodeCursor(String(position), request.filter), fromNow: false };
}

/** The same feed request, continuing where `readFeed`'s `next` stands. */
export function continueAfter(request: FeedRequest, slice: FeedSlice): FeedRequest {
  return slice.nextPosition === null ? request : { ...request, after: slice.nextPosition, given: slice.next };
}

/** The position a decoded cursor holds. */
function positionOf(decoded: string, operation: string): number {
  const position = Number(decoded);
  if (!Number.isSafeInteger(position) || position < 0 || String(position) !== decoded) {
    throw new DocketError('CURSOR_INVALID', 'this cursor is not a changes cursor', { operation });
  }
  return position;
}
