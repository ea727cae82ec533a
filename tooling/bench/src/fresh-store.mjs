// A fresh store for one bench scenario: a SQLite file, or a PostgreSQL schema of its own when `url` is given.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresStore } from '@docket/store-postgres';
import { sqliteStore } from '@docket/store-sqlite';
import Database from 'better-sqlite3';
import pg from 'pg';

/** Runs one statement on the server at `url` with a connection of its own. */
async function admin(url, text) {
  const client = new pg.Client(url);
  await client.connect();
  await client.query(text);
  await client.end();
}

/**
 * Answers `open()` (a new store object on the same fresh data, as often as a scenario needs one: a producer and a
 * consumer each have theirs), `exec(text)` (runs SQL on that data outside Docket, `{t}` standing for the prefix of
 * Docket's table names) and `drop()` (removes the PostgreSQL schema; a SQLite file stays in the temp dir). `label`
 * names the temp dir or the schema.
 */
export async function freshStore(url, label) {
  if (url === undefined) {
    const filename = join(mkdtempSync(join(tmpdir(), `docket-bench-${label}-`)), 'bench.sqlite');
    const exec = async (text) => {
      const db = new Database(filename);
      db.exec(text.replaceAll('{t}', ''));
      db.close();
    };
    return { open: () => sqliteStore({ filename }), exec, drop: async () => {} };
  }
  const schema = `bench_${label}_${process.pid}`;
  await admin(url, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  return {
    open: () => postgresStore({ connectionString: url, schema }),
    exec: (text) => admin(url, text.replaceAll('{t}', `"${schema}".`)),
    drop: () => admin(url, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`),
  };
}
