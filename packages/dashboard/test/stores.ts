import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@docket/core';
import { postgresStore } from '@docket/store-postgres';
import { sqliteStore } from '@docket/store-sqlite';
import pg from 'pg';

const DATABASE_URL = process.env.DOCKET_TEST_DATABASE_URL;

/** A store kind the dashboard is tested on; `open` registers the cleanup of what it made. */
export interface StoreKind {
  name: string;
  open(cleanups: (() => unknown)[]): Store;
  /** The arguments of `fixtures/start-run.mjs` that reach the store `open` made last, from another process. */
  where(): string[];
}

/** The last store each kind opened, for `where()`. */
let lastFile = '';
let lastSchema = '';

/** A SQLite file, and the PostgreSQL server (a fresh schema) when `DOCKET_TEST_DATABASE_URL` names one. */
export const STORE_KINDS: StoreKind[] = [
  {
    name: 'SQLite',
    open(cleanups) {
      const dir = mkdtempSync(join(tmpdir(), 'docket-dashboard-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      lastFile = join(dir, 'docket.sqlite');
      return sqliteStore({ filename: lastFile });
    },
    where: () => ['sqlite', lastFile],
  },
  ...(DATABASE_URL === undefined
    ? []
    : [
        {
          name: 'PostgreSQL',
          open(cleanups: (() => unknown)[]) {
            const schema = `dashboard_${randomBytes(6).toString('hex')}`;
            cleanups.push(async () => {
              const client = new pg.Client({ connectionString: DATABASE_URL });
              await client.connect();
              await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
              await client.end();
            });
            lastSchema = schema;
            return postgresStore({ connectionString: DATABASE_URL, schema });
          },
          where: () => ['postgres', DATABASE_URL, lastSchema],
        },
      ]),
];
