import type Database from 'better-sqlite3';
import { ItemBuffer } from './item-buffer.js';

/** One changes-feed row: namespace, task name, task version, run id, seq. */
type FeedRow = [string, string, string, string, number];

/** The most rows one INSERT of the feed carries. */
const ROWS_PER_INSERT = 64;

/**
 * The changes-feed rows of the open batched commit, written with the batch's last statements, many rows to an INSERT:
 * a row's position is its rowid, given in the order rows are written, and the batch's items ran in order, so the
 * positions ascend in commit order as if each entry had been inserted with its history row. Rows of an item rolled
 * back to its savepoint are dropped with it. Outside a batch (a start in the application's own transaction) each
 * row is written at once.
 */
export class FeedBuffer extends ItemBuffer<FeedRow> {
  private readonly inserts = new Map<number, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    super();
  }

  /** Adds one history entry's feed row: to the current item inside a batch, or at once outside one. */
  add(row: FeedRow): void {
    if (this.active) this.item.push(row);
    else this.insert([row]);
  }

  flush(): void {
    for (let i = 0; i < this.kept.length; i += ROWS_PER_INSERT) this.insert(this.kept.slice(i, i + ROWS_PER_INSERT));
    this.end();
  }

  /** One INSERT of up to `ROWS_PER_INSERT` rows, prepared once per row count. */
  private insert(rows: FeedRow[]): void {
    let statement = this.inserts.get(rows.length);
    if (statement === undefined) {
      const values = rows.map(() => '(?, ?, ?, ?, ?)').join(', ');
      statement = this.db.prepare(
        `INSERT INTO docket_changes (namespace, task_name, task_version, run_id, seq) VALUES ${values}`,
      );
      this.inserts.set(rows.length, statement);
    }
    statement.run(rows.flat());
  }
}
