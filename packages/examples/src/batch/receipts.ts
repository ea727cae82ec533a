import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BatchTask, createQueue, isTerminal } from '@docket/core';
import { postgresStore } from '@docket/store-postgres';
import { sqliteStore } from '@docket/store-sqlite';
import Database from 'better-sqlite3';

/** Options of the batch receipts example. */
export interface ReceiptsOptions {
  /** The SQLite file holding the source rows, the sink and Docket's tables (kept, and found again when run again);
   * default a temporary file, removed when the example ends. */
  filename?: string;
  /** Source rows to snapshot; default 203. */
  rows?: number;
  /** The page that fails once right after writing its receipts; default 2 (0: no forced failure). */
  failOnPage?: number;
  /** Keep Docket's runs in PostgreSQL instead of the SQLite file (the sink stays in the file). */
  databaseUrl?: string;
  /** With `databaseUrl`: the schema for Docket's tables; default `docket`. */
  schema?: string;
}

/** What the example reports. */
export interface ReceiptsResult {
  /** The file given, or `null` for the temporary file the example made and removed. */
  filename: string | null;
  runId: string;
  /** `false` when the idempotency key found the run of an earlier time: the example waited for nothing. */
  created: boolean;
  status: string;
  receipts: number;
  pageReads: number;
  completions: number;
  deliveries: number;
}

const PAGE_SIZE = 100;

/**
 * The batch receipts example: `receipt-snapshot` v1 reads source rows 100 at a time by increasing id, writes one
 * receipt per row under a stable key (so a retried page writes nothing twice), moves on with
 * `ctx.next({ afterSourceId })`, ends on an empty page, and `onSuccess` writes one completion keyed by `eventId`.
 */
export async function runBatchReceipts(options: ReceiptsOptions = {}): Promise<ReceiptsResult> {
  const temporary = options.filename === undefined ? mkdtempSync(join(tmpdir(), 'docket-receipts-')) : null;
  const filename = options.filename ?? join(temporary as string, 'receipts.sqlite');
  const rows = options.rows ?? 203;
  const failOnPage = options.failOnPage ?? 2;
  const db = new Database(filename);
  db.pragma('journal_mode = WAL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS source_rows (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS receipts (receipt_key TEXT PRIMARY KEY, source_id INTEGER NOT NULL, amount INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS completions (event_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, completed_at TEXT NOT NULL);
  `);
  const insertSource = db.prepare('INSERT OR IGNORE INTO source_rows (id, amount) VALUES (?, ?)');
  db.transaction(() => {
    for (let id = 1; id <= rows; id++) insertSource.run(id, id * 10);
  })();
  const readPage = db.prepare('SELECT id, amount FROM source_rows WHERE id > ? ORDER BY id LIMIT ?');
  // The sink: a stable key per receipt makes writing it again a no-op (the page may run more than once).
  const putOnce = db.prepare('INSERT OR IGNORE INTO receipts (receipt_key, source_id, amount) VALUES (?, ?, ?)');
  const complete = db.prepare('INSERT OR IGNORE INTO completions (event_id, run_id, completed_at) VALUES (?, ?, ?)');

  let pageReads = 0;
  let failed = false;
  let deliveries = 0;
  // Switching Docket from SQLite to PostgreSQL is this one line.
  const queue = createQueue({
    store: options.databaseUrl
      ? postgresStore({ connectionString: options.databaseUrl, schema: options.schema ?? 'docket' })
      : sqliteStore({ database: db }),
    protocol: { pollMs: 20 },
  });
  // The seed's definition, policy included: a failed page is retried after a full-jitter delay of up to 500 ms.
  const task = queue.define<{ snapshotId: string }, { afterSourceId: number }>(
    {
      name: 'receipt-snapshot',
      version: '1',
      events: ['success'],
      policy: { attempts: 3, timeoutMs: 30_000, backoff: { baseMs: 500, maxMs: 5_000, jitter: 'full' } },
    },
    {
      async execute(ctx) {
        const after = ctx.state?.afterSourceId ?? 0;
        pageReads++;
        const page = readPage.all(after, PAGE_SIZE) as { id: number; amount: number }[];
        if (page.length === 0) return ctx.end();
        for (const row of page) putOnce.run(`${ctx.query.snapshotId}:${row.id}`, row.id, row.amount);
        if (ctx.page === failOnPage && !failed) {
          failed = true;
          throw new Error('forced failure after the receipts were written');
        }
        return ctx.next({ afterSourceId: page.at(-1)!.id });
      },
      onSuccess(ctx) {
        deliveries++;
        complete.run(ctx.eventId, ctx.runId, ctx.timestamp);
      },
    },
  );
  try {
    await queue.ready();
    // Run again with the same key, this finds the finished run: it waits for nothing that already happened.
    const { runId, created } = await task.start({ query: { snapshotId: 'snapshot-1' }, idempotencyKey: 'snapshot-1' });
    const info = await settled(task, runId);
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    return {
      filename: temporary === null ? filename : null,
      runId,
      created,
      status: info?.status ?? 'missing',
      receipts: count('SELECT count(*) AS n FROM receipts'),
      pageReads,
      completions: count('SELECT count(*) AS n FROM completions'),
      deliveries,
    };
  } finally {
    await queue.close();
    db.close();
    if (temporary !== null) rmSync(temporary, { recursive: true, force: true });
  }
}

/** Waits until the run is terminal and its callbacks are delivered or dead-lettered, and answers it then. */
async function settled(task: BatchTask<{ snapshotId: string }, { afterSourceId: number }>, runId: string) {
  for (;;) {
    const info = await task.wait(runId, { timeoutMs: 60_000 });
    if (info === null || (isTerminal(info.status) && info.callbacks.pending === 0)) return info;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
