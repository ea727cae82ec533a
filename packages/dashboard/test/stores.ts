import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@docket/core';
import { postgresStore } from '@docket/store-postgres';
import { sqliteStore } from '@docket/store-sqlite';
import pg from 'pg';
// @ts-expect-error Plain JavaScript, shared with the global setup.
import { createTestSchema } from '../../../tooling/config/postgres-schemas.mjs';

const DATABASE_URL = process.env.DOCKET_TEST_DATABASE_URL;

/** A store kind the dashboard is tested on; `open` registers the cleanup of what it made. */
export interface StoreKind {
  name: string;
  open(cleanups: (() => unknown)[]): Promise<Store>;
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
    async open(cleanups) {
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
          async open(cleanups: (() => unknown)[]) {
            const schema = `dashboard_${randomBytes(6).toString('hex')}`;
            const client = new pg.Client({ connectionString: DATABASE_URL });
            await client.connect();
            cleanups.push(async () => {
              await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
              await client.end();
            });
            await createTestSchema((text: string) => client.query(text), schema);
            lastSchema = schema;
            return postgresStore({ connectionString: DATABASE_URL, schema });
          },
          where: () => ['postgres', DATABASE_URL, lastSchema],
        },
      ]),
];
