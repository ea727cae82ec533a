import { DocketError } from '@docket/core';
import { KnownRuns } from '@docket/core/store';
import type Database from 'better-sqlite3';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import type { CommitBatcher, ItemMode } from './commit-batcher.js';
import { isStoreFault, sqliteCode, storageFailure } from './errors.js';
import type { Statements } from './statements.js';

/** The open connection's parts every verb uses. */
export interface OpenConnection {
  db: Database.Database;
  s: Statements;
  orm: BetterSQLite3Database;
  batch: CommitBatcher;
}

/** What every verb of one SQLite store shares: the open connection, and how writes and reads are wrapped. */
export class SqliteContext {
  /** Set by `open()`, cleared by the last `close()`. */
  open: OpenConnection | null = null;
  /** Why the database file can no longer be trusted (deleted or replaced under the connection), until `close()`. */
  lost: string | null = null;
  /** Runs this store last wrote with a lease, as it wrote them: its workers' runs (see `KnownRuns`). */
  readonly known = new KnownRuns();

  /**
   * The open connection; `CONNECTION_UNAVAILABLE` before `open()`, and once the file was deleted or replaced: the
   * connection would keep writing into a file nobody else reads.
   */
  live(): OpenConnection {
    if (this.open === null) {
      throw new DocketError('CONNECTION_UNAVAILABLE', 'the SQLite store is not open: call queue.ready() first', {
        operation: 'store',
      });
    }
    if (this.lost !== null) throw new DocketError('CONNECTION_UNAVAILABLE', this.lost, { operation: 'store' });
    return this.open;
  }

  /**
   * Runs `work` in the batched commit (one `BEGIN IMMEDIATE` transaction shared with the writes of this turn, a
   * savepoint of its own unless `mode` is `none`, see `ItemMode`); a driver error becomes `STORAGE_FAILURE`, an error
   * in `passThrough` is rethrown as it is.
   */
  write<T>(
    operation: string,
    work: (open: OpenConnection) => T,
    runId?: string,
    passThrough?: () => unknown,
    mode: ItemMode = 'savepoint',
  ): Promise<T> {
    const open = this.live();
    return open.batch
      .run(() => work(open), mode)
      .catch((error) => {
        // The plan's own error (an effect's) is the page's, unless it says the store itself failed (a full disk).
        if (passThrough !== undefined && error === passThrough() && !isStoreFault(sqliteCode(error))) throw error;
        throw storageFailure(error, operation, runId);
      });
  }

  /** Runs a read at once, outside any transaction; a driver error becomes `STORAGE_FAILURE`. */
  async read<T>(operation: string, work: (open: OpenConnection) => T, runId?: string): Promise<T> {
    const open = this.live();
    try {
      return work(open);
    } catch (error) {
      throw storageFailure(error, operation, runId);
    }
  }
}
