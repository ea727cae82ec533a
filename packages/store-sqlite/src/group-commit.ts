import type Database from 'better-sqlite3';

/** One unit of work in a group: runs inside its own SAVEPOINT of the shared transaction. */
interface Item {
  work: () => unknown;
  /** The work opens its own savepoint (a nested better-sqlite3/drizzle transaction): skip the group's. */
  ownSavepoint: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Set once the item was put back after another item's failure rolled back its group: it is not put back again. */
  retried?: boolean;
}

/**
 * Group commit for one connection. Writes asked for in the same turn of the event loop run in one `BEGIN IMMEDIATE`
 * transaction, each inside its own SAVEPOINT: an item that throws rolls back only its own writes and gets its own
 * error, and no item resolves before the shared COMMIT. If BEGIN or COMMIT fails, nothing was written and every
 * item is rejected through `wrapCommitError`. Atomicity and isolation per item are those of a transaction of its own;
 * the only thing shared is the commit, which is what makes a page cost a fraction of an fsync-bounded write.
 */
export class GroupCommit {
  private queue: Item[] = [];
  private scheduled = false;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly wrapCommitError: (error: unknown) => unknown,
    private readonly maxBatch = 512,
    private readonly wrapGroupAbort: (error: unknown) => unknown = wrapCommitError,
  ) {
    this.savepoint = db.prepare('SAVEPOINT docket_item');
    this.release = db.prepare('RELEASE docket_item');
    this.rollbackTo = db.prepare('ROLLBACK TO docket_item');
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
  }

  /** Queues `work` for the next group transaction and resolves with its value after the commit. */
  run<T>(work: () => T, ownSavepoint = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, ownSavepoint, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue.splice(0, this.maxBatch);
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    if (batch.length === 0) return;
    if (!this.db.open) {
      for (const item of batch) item.reject(this.wrapCommitError(new Error('the database connection is closed')));
      return;
    }
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      this.begin.run();
    } catch (error) {
      for (const item of batch) item.reject(this.wrapCommitError(error));
      return;
    }
    try {
      for (const item of batch) {
        if (!item.ownSavepoint) this.savepoint.run();
        try {
          const value = item.work();
          if (!item.ownSavepoint) this.release.run();
          outcomes.push({ ok: true, value });
        } catch (error) {
          // Some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM) make SQLite roll back the whole transaction: the
          // items before this one lost their writes too. This item gets its own error; the others are tried again
          // on their own (see below), and nothing of this group is reported written.
          if (!this.db.inTransaction) {
            outcomes.push({ ok: false, error });
            throw error;
          }
          if (!item.ownSavepoint) {
            this.rollbackTo.run();
            this.release.run();
          }
          outcomes.push({ ok: false, error });
        }
      }
      this.commit.run();
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      this.failed(batch, outcomes, error);
      return;
    }
    this.settled(batch, outcomes);
  }

  /**
   * A group whose transaction ended without its COMMIT: each item that failed gets its own error. When one item's
   * error rolled back the whole transaction, the others did nothing wrong: each is put back, once, for the next
   * group (it runs again from the start; its earlier writes were rolled back); one that meets such a rollback again
   * gets `wrapGroupAbort`. When BEGIN or COMMIT itself failed, every item gets `wrapCommitError`.
   */
  private failed(
    batch: Item[],
    outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[],
    error: unknown,
  ) {
    const aborted = outcomes.some((outcome) => !outcome.ok && outcome.error === error);
    const again: Item[] = [];
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome && !outcome.ok) item.reject(outcome.error);
      else if (!aborted) item.reject(this.wrapCommitError(error));
      else if (item.retried) item.reject(this.wrapGroupAbort(error));
      else {
        item.retried = true;
        again.push(item);
      }
    });
    if (again.length === 0) return;
    this.queue.unshift(...again);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** A committed group: each item resolves with its value or rejects with its own error. */
  private settled(batch: Item[], outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[]) {
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
