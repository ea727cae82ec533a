import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
// @ts-expect-error Plain JavaScript, shared with the tests.
import { migratedSchemaSql } from './postgres-template.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The DDL of a migrated schema, named by `SCHEMA_MARK` (null without a server or pg_dump). */
    postgresSchemaSql: string | null;
  }
}

/**
 * Builds every package once before the tests: tests that spawn child processes import the built packages by their
 * public names, exactly as users do. turbo's cache makes this a no-op when nothing changed. Says when the tests that
 * need a real PostgreSQL server are left out, and how to run them. With a server, migrates one schema and provides
 * its DDL, from which each test's fresh schema is made (`createTestSchema`).
 */
export default async function setup(project: TestProject): Promise<void> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
  });
  const url = process.env.DOCKET_TEST_DATABASE_URL;
  const schemaSql = url ? await migratedSchemaSql(url) : null;
  project.provide('postgresSchemaSql', schemaSql);
  if (url && schemaSql === null) {
    process.stderr.write('pg_dump could not dump a migrated schema: each PostgreSQL test migrates its own (slower).\n');
  }
  if (!url) {
    process.stderr.write(
      'PostgreSQL server tests are skipped (the suite of the PostgreSQL store runs on PGlite): set ' +
        'DOCKET_TEST_DATABASE_URL=postgres://user@host:5432/db to run them against a real server.\n',
    );
  }
}
