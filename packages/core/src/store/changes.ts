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
}

/** What `Store.trimChanges` removes: at most `limit` of the oldest feed entries written before `before` (epoch ms). */
export interface TrimChangesRequest {
  namespace: string;
  before: number;
  limit: number;
}
