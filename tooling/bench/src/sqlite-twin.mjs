// The SQLite twin of the PostgreSQL bench's raw-tables row: plain better-sqlite3 statements doing what a Docket worker
// writes for a single-page run, on Docket's own tables, batched: the honest ceiling for what Docket stores per run.
import Database from 'better-sqlite3';

/** The most changes-feed rows one INSERT carries, as the store writes them. */
const FEED_ROWS_PER_INSERT = 64;

/**
 * Writes the changes-feed rows of a transaction's history entries as the store does at the end of its batch: one
 * INSERT per 64 rows, each row the run's namespace, task, version, id and seq (its position is the next rowid).
 */
function feedWriter(db) {
  const inserts = new Map();
  const insert = (count) => {
    let statement = inserts.get(count);
    if (statement === undefined) {
      const values = Array.from({ length: count }, () => "('default', ?, ?, ?, ?)").join(', ');
      statement = db.prepare(
        `INSERT INTO docket_changes (namespace, task_name, task_version, run_id, seq) VALUES ${values}`,
      );
      inserts.set(count, statement);
    }
    return statement;
  };
  return (rows) => {
    for (let i = 0; i < rows.length; i += FEED_ROWS_PER_INSERT) {
      const part = rows.slice(i, i + FEED_ROWS_PER_INSERT);
      insert(part.length).run(part.flat());
    }
  };
}

/**
 * Processes every pending run of `filename` (a Docket file) the way a Docket worker does, without Docket's JavaScript:
 * per batch of `perTransaction` runs, one transaction claims them (each row updated under its revision to `running`
 * with a lease, one history entry and one feed row each) and one settles them (each row updated under its revision and
 * lease to `success`, one history entry and one feed row each, the finished count and the minute's count once).
 * Payloads are parsed as a handler's input would be. Answers the runs processed.
 */
export function docketWritesLoop(filename, perTransaction, { name, version }) {
  const db = new Database(filename);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const select = db.prepare(
    `SELECT run_id, revision, fence, query FROM docket_runs INDEXED BY docket_runs_claim_priority
     WHERE namespace = 'default' AND task_name = ? AND task_version = ? AND priority = 0
     AND claim_due_at IS NOT NULL AND claim_due_at <= ? ORDER BY claim_due_at LIMIT ? + 0`,
  );
  const claim = db.prepare(
    `UPDATE docket_runs SET status = 'running', reason = 'CLAIMED', revision = ?, due_at = NULL, claim_due_at = NULL,
     fence = ?, lease_owner = 'worker:raw', lease_token = ?, lease_expires_at = ?, updated_at = ?
     WHERE run_id = ? AND revision = ?`,
  );
  const settle = db.prepare(
    `UPDATE docket_runs SET status = 'success', reason = 'COMPLETED', revision = ?, lease_owner = NULL,
     lease_token = NULL, lease_expires_at = NULL, updated_at = ?
     WHERE run_id = ? AND revision = ? AND lease_expires_at IS ?`,
  );
  const history = db.prepare(
    `INSERT INTO docket_history (run_id, seq, at, from_status, to_status, reason, actor) VALUES (?, ?, ?, ?, ?, ?, 'worker:raw')`,
  );
  const count = db.prepare(
    `INSERT INTO docket_run_counts (namespace, task_name, task_version, status, n) VALUES ('default', ?, ?, 'success', ?)
     ON CONFLICT DO UPDATE SET n = n + excluded.n`,
  );
  const minute = db.prepare(
    `INSERT INTO docket_settled_minutes (namespace, minute, n) VALUES ('default', ?, ?)
     ON CONFLICT DO UPDATE SET n = n + excluded.n`,
  );
  const feed = feedWriter(db);
  const claimTx = db.transaction(() => {
    const now = Date.now();
    const at = new Date(now).toISOString();
    const leaseExpiresAt = now + 30_000;
    const rows = select.all(name, version, now, perTransaction);
    for (const row of rows) {
      row.revision += 1;
      row.fence += 1;
      row.leaseExpiresAt = leaseExpiresAt;
      claim.run(row.revision, row.fence, row.fence, leaseExpiresAt, now, row.run_id, row.revision - 1);
      history.run(row.run_id, row.revision, at, 'pending', 'running', 'CLAIMED');
    }
    feed(rows.map((row) => [name, version, row.run_id, row.revision]));
    return rows;
  });
  const settleTx = db.transaction((rows) => {
    const now = Date.now();
    const at = new Date(now).toISOString();
    for (const row of rows) {
      settle.run(row.revision + 1, now, row.run_id, row.revision, row.leaseExpiresAt);
      history.run(row.run_id, row.revision + 1, at, 'running', 'success', 'COMPLETED');
    }
    feed(rows.map((row) => [name, version, row.run_id, row.revision + 1]));
    count.run(name, version, rows.length);
    minute.run(now - (now % 60_000), rows.length);
  });
  let processed = 0;
  for (;;) {
    const rows = claimTx.immediate();
    if (rows.length === 0) break;
    for (const row of rows) JSON.parse(row.query);
    settleTx.immediate(rows);
    processed += rows.length;
  }
  db.close();
  return processed;
}

/**
 * Starts `n` runs in `filename` (a Docket file, schema in place) the way `startMany` does, without Docket's
 * JavaScript: per batch of `per` runs, one transaction inserts each run's row as Docket writes it for a plain start
 * (the payload and counters; the definition hash, policy, callback kinds and recovery left `''` to the task version;
 * out of the group claim index, as a task without group limits), its first history entry and its feed row. The
 * ceiling for what Docket stores per start.
 */
export function docketStartsLoop(filename, n, per, { name, version }, payload) {
  const db = new Database(filename);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const insert = db.prepare(
    `INSERT INTO docket_runs (run_id, namespace, task_name, task_version, definition_hash, status, reason, query, page,
     page_failures, business_failures, scheduled_retries, recoveries, revision, due_at, claim_due_at, model_calls_used,
     input_hash, policy, events, recovery, fence, created_at, updated_at, priority, retries, by_group)
     VALUES (?, 'default', ?, ?, '', 'pending', 'STARTED', ?, 1, 0, 0, 0, 0, 1, ?, ?, 0, '', '', '', '', 0, ?, ?, 0, 0, 0)`,
  );
  const history = db.prepare(
    `INSERT INTO docket_history (run_id, seq, at, from_status, to_status, reason, actor)
     VALUES (?, 1, ?, NULL, 'pending', 'STARTED', 'producer')`,
  );
  const feed = feedWriter(db);
  const tx = db.transaction((from, to) => {
    const now = Date.now();
    const at = new Date(now).toISOString();
    const started = [];
    for (let i = from; i < to; i++) {
      const id = `${now.toString(16).padStart(12, '0')}${i.toString(16).padStart(20, '0')}`;
      insert.run(id, name, version, JSON.stringify(payload(i)), now, now, now, now);
      history.run(id, at);
      started.push([name, version, id, 1]);
    }
    feed(started);
  });
  for (let i = 0; i < n; i += per) tx.immediate(i, Math.min(n, i + per));
  db.close();
}
