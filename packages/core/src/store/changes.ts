// The changes feed's store side: what `readChanges` and `trimChanges` take and answer.
import type { HistoryEntry } from '../machine/run-types.js';

/** What `Store.readChanges` reads: one namespace's feed after a position, optionally one task's entries. */
export interface ChangesRequest {
  namespace: string;
  taskName: string | null;
  /** Entries after this position; `null`: after the namespace's floor (from the oldest entry kept). */
  after: number | null;
  limit: number;
}

/** One feed entry as a store keeps it: its position in commit order, its run and task, and the history entry. */
export interface StoredChange {
  /** Ascends in commit order across the whole database; never reused, even after retention. */
  position: number;
  runId: string;
  taskName: string;
  taskVersion: string;
  entry: HistoryEntry;
}

/**
 * `Store.readChanges`'s answer: up to `limit` entries in position order, and the namespace's floor, the highest
 * position retention has removed (0 when none), read after the entries so a reader never misses a removal.
 */
export interface ChangesAnswer {
  changes: StoredChange[];
  floor: number;
  /**
   * A store that reads a window of positions (SQLite) and found fewer than `limit` entries in it: the last position
   * it looked at, where the next read continues (entries up to it that match were all answered). Absent: the next
   * read continues after the last entry.
   */
  through?: number;
  /** With `through`: whether positions past the window exist, so the reader should read again without waiting. */
  more?: boolean;
}

/** What `Store.trimChanges` removes: at most `limit` of the oldest feed entries written before `before` (epoch ms). */
export interface TrimChangesRequest {
  namespace: string;
  before: number;
  limit: number;
}

/**
 * The longest prefix of the oldest feed rows that retention may remove: rows written before `before` (ISO time), or
 * with no time (their run is gone), up to the first newer one. Answers how many, and the key of the last.
 */
export function prefixBefore<T extends { at: string | null }>(
  rows: Iterable<T>,
  before: string,
  keyOf: (row: T) => number,
): { count: number; key: number } {
  let key = 0;
  let count = 0;
  for (const row of rows) {
    if (row.at !== null && row.at >= before) break;
    key = keyOf(row);
    count++;
  }
  return { count, key };
}
