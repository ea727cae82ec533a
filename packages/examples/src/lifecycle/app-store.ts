import Database from 'better-sqlite3';
import { eq } from 'drizzle-orm';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** The application's releases: the business object a notice is written for. */
export const releases = sqliteTable('releases', {
  id: text('id').primaryKey(),
  title: text('title').notNull(),
  revision: integer('revision').notNull(),
  status: text('status').notNull(),
  change: text('change').notNull(),
  updatedAt: text('updated_at').notNull(),
});

/** Registered notices; the primary key is the run id, so one run can never register two notices. */
export const notices = sqliteTable('notices', {
  runId: text('run_id').primaryKey(),
  releaseId: text('release_id').notNull(),
  revision: integer('revision').notNull(),
  title: text('title').notNull(),
  body: text('body').notNull(),
  createdAt: text('created_at').notNull(),
});

/** A release as the application and its source file describe it. */
export interface Release {
  id: string;
  title: string;
  revision: number;
  status: 'draft' | 'ready' | 'withdrawn';
  change: string;
}

/** A notice as the model writes it and the application registers it. */
export interface Notice {
  releaseId: string;
  revision: number;
  title: string;
  body: string;
}

const DDL = `
CREATE TABLE IF NOT EXISTS releases (id TEXT PRIMARY KEY, title TEXT NOT NULL, revision INTEGER NOT NULL, status TEXT NOT NULL, change TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notices (run_id TEXT PRIMARY KEY, release_id TEXT NOT NULL, revision INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL);
`;

/** The application's side of `lifecycle.sqlite`: its own tables, on the connection Docket's store shares. */
export interface AppStore {
  readonly database: Database.Database;
  readonly db: BetterSQLite3Database;
  getRelease(id: string): Release | null;
  putRelease(release: Release): void;
  /** A trusted controller's update: the same revision becomes ready (or another status). */
  setReleaseStatus(id: string, status: Release['status']): void;
  /** The business change during inference: a new revision. */
  bumpRevision(id: string): void;
  noticeFor(runId: string): Notice | null;
  noticeCount(): number;
  close(): void;
}

/** Opens (and creates) the application's tables in `filename`. */
export function openAppStore(filename: string): AppStore {
  const database = new Database(filename);
  database.pragma('journal_mode = WAL');
  database.pragma('busy_timeout = 5000');
  database.exec(DDL);
  const db = drizzle({ client: database });
  const now = () => new Date().toISOString();
  return {
    database,
    db,
    getRelease(id) {
      const row = db.select().from(releases).where(eq(releases.id, id)).get();
      return row
        ? {
            id: row.id,
            title: row.title,
            revision: row.revision,
            status: row.status as Release['status'],
            change: row.change,
          }
        : null;
    },
    putRelease(release) {
      db.insert(releases)
        .values({ ...release, updatedAt: now() })
        .onConflictDoUpdate({ target: releases.id, set: { ...release, updatedAt: now() } })
        .run();
    },
    setReleaseStatus(id, status) {
      db.update(releases).set({ status, updatedAt: now() }).where(eq(releases.id, id)).run();
    },
    bumpRevision(id) {
      const current = this.getRelease(id);
      if (current)
        db.update(releases)
          .set({ revision: current.revision + 1, updatedAt: now() })
          .where(eq(releases.id, id))
          .run();
    },
    noticeFor(runId) {
      const row = db.select().from(notices).where(eq(notices.runId, runId)).get();
      return row ? { releaseId: row.releaseId, revision: row.revision, title: row.title, body: row.body } : null;
    },
    noticeCount() {
      return (database.prepare('SELECT count(*) AS n FROM notices').get() as { n: number }).n;
    },
    close() {
      if (database.open) database.close();
    },
  };
}
