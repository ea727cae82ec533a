import type Database from 'better-sqlite3';

/**
 * How an item's writes are undone when it throws: `savepoint`, its own SAVEPOINT of the shared transaction, rolled
 * back to; `none`, no savepoint: the work promises that a throw means it wrote nothing, and throws `BatchAbort` once
 * it has begun to write, which rolls back the whole batch (the other items run again, as after a full disk).
 */
export type ItemMode = 'savepoint' | 'none';

/** Thrown by an item of mode `none` that failed after it began to write: the batch is rolled back. */
export class BatchAbort extends Error {
  constructor(readonly error: unknown) {
    super('the batch is rolled back: an item failed half-way');
  }
}

/** What became of one item of a batch. */
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** An item's failure that rolled back, or must roll back, the whole batch: carries the item's own outcome. */
class ItemAbort {
  constructor(readonly outcome: { ok: false; error: unknown }) {}
}

/** What a batch tells the parts that hold changes in memory until its COMMIT (see `CountBuffer`). */
export interface BatchHooks {
  /** The batch's transaction began. */
  begin(): void;
  /** An item ended: its writes were kept, or undone with its savepoint. */
  itemEnded(kept: boolean): void;
  /** Just before the COMMIT, in the transaction: a throw rolls the batch back. */
  flush(): void;
  /** The batch's transaction was rolled back. */
  end(): void;
}

const NO_HOOKS: BatchHooks = { begin() {}, itemEnded() {}, flush() {}, end() {} };

/** Several parts' batch hooks called as one, in order. */
export function allHooks(...parts: BatchHooks[]): BatchHooks {
  return {
    begin: () => {
      for (const part of parts) part.begin();
    },
    itemEnded: (kept) => {
      for (const part of parts) part.itemEnded(kept);
    },
    flush: () => {
      for (const part of parts) part.flush();
    },
    end: () => {
      for (const part of parts) part.end();
    },
  };
}

/** One unit of work in a batch. */
interface Item {
  work: () => unknown;
  mode: ItemMode;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Set once the item was put back after another item's failure rolled back its batch: it is not put back again. */
  retried?: boolean;
}

/**
 * Batched commit for one connection. Writes asked for in the same turn of the event loop run in one `BEGIN IMMEDIATE`
 * transaction, each inside its own SAVEPOINT: an item that throws rolls back only its own writes and gets its own
 * error, and no item resolves before the shared COMMIT. If BEGIN or COMMIT fails, nothing was written and every
 * item is rejected through `wrapCommitError`. Atomicity and isolation per item are those of a transaction of its own;
 * the only thing shared is the commit, which is what makes a page cost a fraction of an fsync-bounded write.
 */
export class CommitBatcher {
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
    private readonly wrapBatchAbort: (error: unknown) => unknown = wrapCommitError,
    private readonly hooks: BatchHooks = NO_HOOKS,
  ) {
    this.savepoint = db.prepare('SAVEPOINT docket_item');
    this.release = db.prepare('RELEASE docket_item');
    this.rollbackTo = db.prepare('ROLLBACK TO docket_item');
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
  }

  /** Queues `work` for the next batch transaction and resolves with its value after the commit. */
  run<T>(work: () => T, mode: ItemMode = 'savepoint'): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, mode, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    // An item put back after another item's failure rolled its batch back runs alone: a second oversized neighbour
    // (the disk still full) must not take it down with it.
    const batch = this.queue.splice(0, this.queue[0]?.retried ? 1 : this.maxBatch);
    if (this.queue.length > 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    if (batch.length === 0) return;
    if (!this.db.open) {
      for (const item of batch) item.reject(this.wrapCommitError(new Error('the database connection is closed')));
      return;
    }
    const outcomes: Outcome[] = [];
    try {
      this.begin.run();
    } catch (error) {
      for (const item of batch) item.reject(this.wrapCommitError(error));
      return;
    }
    try {
      this.hooks.begin();
      for (const item of batch) outcomes.push(this.runItem(item));
      this.hooks.flush();
      this.commit.run();
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      this.hooks.end();
      if (error instanceof ItemAbort) {
        outcomes.push(error.outcome);
        this.failed(batch, outcomes, error.outcome.error, true);
      } else {
        this.failed(batch, outcomes, error, false);
      }
      return;
    }
    this.settled(batch, outcomes);
  }

  /**
   * Runs one item in the open transaction and answers its outcome; throws (after recording the item's own outcome)
   * when the item's failure rolled back, or must roll back, the whole transaction.
   */
  private runItem(item: Item): Outcome {
    const savepoint = item.mode === 'savepoint';
    if (savepoint) this.savepoint.run();
    try {
      const value = item.work();
      if (savepoint) this.release.run();
      this.hooks.itemEnded(true);
      return { ok: true, value };
    } catch (thrown) {
      const abort = thrown instanceof BatchAbort;
      const error = abort ? thrown.error : thrown;
      // Some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM) make SQLite roll back the whole transaction: the items
      // before this one lost their writes too. This item gets its own error; the others are tried again on their own
      // (see `failed`), and nothing of this batch is reported written. An item without a savepoint that failed
      // half-way asks for the same.
      if (abort || !this.db.inTransaction) throw new ItemAbort({ ok: false, error });
      if (savepoint) {
        this.rollbackTo.run();
        this.release.run();
      }
      this.hooks.itemEnded(false);
      return { ok: false, error };
    }
  }

  /**
   * A batch whose transaction ended without its COMMIT: each item that failed gets its own error. When one item's
   * error rolled back the whole transaction, the others did nothing wrong: each is put back, once, to run again in a
   * transaction of its own (from the start; its earlier writes were rolled back); one that fails so on its own gets
   * `wrapBatchAbort`. When BEGIN or COMMIT itself failed, every item gets `wrapCommitError`.
   */
  private failed(batch: Item[], outcomes: Outcome[], error: unknown, aborted: boolean) {
    const again: Item[] = [];
    batch.forEach((item, i) => {
      const outcome = outcomes[i];
      if (outcome && !outcome.ok) item.reject(outcome.error);
      else if (!aborted) item.reject(this.wrapCommitError(error));
      else if (item.retried) item.reject(this.wrapBatchAbort(error));
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

  /** A committed batch: each item resolves with its value or rejects with its own error. */
  private settled(batch: Item[], outcomes: Outcome[]) {
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
