import { DocketError } from '../../util/errors.js';
import {
  type Change,
  changeOf,
  continueAfter,
  type FeedRequest,
  feedRequest,
  fromHead,
  readFeed,
} from '../operator/changes.js';
import type { Engine } from './engine.js';
import { Waker } from './waker.js';

/** The options of `queue.watch`. */
export interface WatchOptions {
  /** A cursor from `operator.changes` or from a watched change; none: from the oldest entry kept. */
  after?: string;
  /** Only this task's entries. */
  taskName?: string;
  /** Ends the watch (the iterator returns) when it aborts. */
  signal?: AbortSignal;
  /** Without `after`: `'oldest'` (the default) starts at the oldest entry kept, `'now'` after the newest one. */
  from?: 'oldest' | 'now';
}

/** A watched change: the feed entry and the cursor that resumes the feed right after it. */
export type WatchedChange = Change & { cursor: string };

/** How many entries one read of a watch asks for. */
const WATCH_PAGE = 100;

/**
 * `queue.watch`: the changes feed as an async iterator that waits for new entries, woken by another process's commit
 * (the store's signal), by this process's own writes, else every `pollMs`; it returns when `signal` aborts or the queue
 * closes. Options and the cursor are checked now (`CONFIG_INVALID`, `CURSOR_INVALID` for a cursor of another feed);
 * a cursor older than retention kept fails the first read (`CURSOR_EXPIRED`).
 */
export function watchChanges(engine: Engine, options: WatchOptions = {}): AsyncIterableIterator<WatchedChange> {
  const operation = 'queue.watch';
  const { signal, ...feedOptions } = (options ?? {}) as WatchOptions;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new DocketError('CONFIG_INVALID', 'queue.watch: signal must be an AbortSignal', { operation });
  }
  const request = feedRequest(engine, { ...feedOptions, limit: WATCH_PAGE }, operation);
  return follow(engine, request, signal, operation);
}

async function* follow(
  engine: Engine,
  first: FeedRequest,
  signal: AbortSignal | undefined,
  operation: string,
): AsyncGenerator<WatchedChange> {
  const waker = new Waker();
  const wake = () => waker.wake();
  const stops = [engine.feed.listen(wake), engine.store.subscribe?.(wake, engine.log) ?? (() => undefined)];
  signal?.addEventListener('abort', wake);
  engine.closing.signal.addEventListener('abort', wake);
  const ended = () => signal?.aborted === true || engine.closing.signal.aborted;
  let request = first;
  try {
    if (request.fromNow) request = await fromHead(engine, request);
    while (!ended()) {
      const slice = await readFeed(engine, request, operation).catch((error: unknown) => {
        // A close that ends the watch may close the store under a read: the watch ends, it does not fail.
        if (ended()) return null;
        throw error;
      });
      if (slice === null) return;
      request = continueAfter(request, slice);
      for (const [i, change] of slice.changes.entries()) {
        yield { ...changeOf(change), cursor: slice.cursors[i] as string };
        if (ended()) return;
      }
      if (!slice.more) await waker.sleep(engine.options.protocol.pollMs);
    }
  } finally {
    for (const stop of stops) stop();
    signal?.removeEventListener('abort', wake);
    engine.closing.signal.removeEventListener('abort', wake);
  }
}
