import type { PostgresTransaction } from '@docket/store-postgres';
import type { SqliteTransaction } from '@docket/store-sqlite';
import type Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import pg from 'pg';

/** One digest as the application stores it: which run wrote it, and the summaries it gathered. */
export interface DigestRow {
  runId: string;
  summaries: { docId: string; summary: string }[];
}

/**
 * Where the digest goes: a table beside Docket's own, written by the parent's last commit (`ctx.end({ effect })`) in
 * Docket's transaction, so the digest exists exactly when the run succeeded.
 */
export interface DigestSink<Tx> {
  /** The effect's write: one row per run (written again, it changes nothing). */
  write(tx: Tx, row: DigestRow): unknown;
  /** How many digests a run wrote (0 or 1), and how many summaries they hold. */
  count(runId: string): Promise<{ digests: number; summaries: number }>;
  close(): Promise<void>;
}

/** The digests table in the SQLite file that also holds Docket's tables. */
export function sqliteSink(db: Database.Database): DigestSink<SqliteTransaction> {
  db.exec(`CREATE TABLE IF NOT EXISTS digests (
    run_id TEXT PRIMARY KEY, documents INTEGER NOT NULL, summaries TEXT NOT NULL, created_at TEXT NOT NULL)`);
  const count = db.prepare(
    'SELECT count(*) AS digests, coalesce(sum(documents), 0) AS summaries FROM digests WHERE run_id = ?',
  );
  return {
    write(tx, row) {
      tx.run(sql`INSERT OR IGNORE INTO digests (run_id, documents, summaries, created_at)
        VALUES (${row.runId}, ${row.summaries.length}, ${JSON.stringify(row.summaries)}, ${new Date().toISOString()})`);
    },
    async count(runId) {
      return count.get(runId) as { digests: number; summaries: number };
    },
    async close() {},
  };
}

/** The digests table in Docket's PostgreSQL schema. */
export async function postgresSink(url: string, schema: string): Promise<DigestSink<PostgresTransaction>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const table = `"${schema.replaceAll('"', '""')}".digests`;
  await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema.replaceAll('"', '""')}"`);
  await client.query(`CREATE TABLE IF NOT EXISTS ${table} (
    run_id TEXT PRIMARY KEY, documents INTEGER NOT NULL, summaries TEXT NOT NULL, created_at TEXT NOT NULL)`);
  return {
    write(tx, row) {
      return tx.execute(sql`INSERT INTO ${sql.raw(table)} (run_id, documents, summaries, created_at)
        VALUES (${row.runId}, ${row.summaries.length}, ${JSON.stringify(row.summaries)}, ${new Date().toISOString()})
        ON CONFLICT (run_id) DO NOTHING`);
    },
    async count(runId) {
      const result = await client.query(
        `SELECT count(*)::int AS digests, coalesce(sum(documents), 0)::int AS summaries FROM ${table} WHERE run_id = $1`,
        [runId],
      );
      return result.rows[0] as { digests: number; summaries: number };
    },
    close: () => client.end(),
  };
}
