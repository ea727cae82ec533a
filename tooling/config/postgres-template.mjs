import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** What stands for the schema's name in the DDL the global setup provides. */
export const SCHEMA_MARK = 'docket_test_template_schema';

/** The PostgreSQL store's package: its build, and the driver it depends on. */
const STORE = new URL('../../packages/store-postgres/', import.meta.url);

/**
 * The DDL and rows (the migrations journal, the feed's head) of a schema the PostgreSQL store migrated, as pg_dump
 * writes them, with every name qualified by {@link SCHEMA_MARK}; null when pg_dump cannot give them (not
 * installed, another server version). A test's schema made from them is one message, not the migrations one by one
 * (a fifth of a second each).
 * @param {string} url
 * @returns {Promise<string | null>}
 */
export async function migratedSchemaSql(url) {
  const { postgresStore } = await import(fileURLToPath(new URL('dist/index.js', STORE)));
  const pg = createRequire(new URL('package.json', STORE))('pg');
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  // A name of this run's own: two runs on one server (Node 20 and 24) must not drop each other's template.
  const template = `${SCHEMA_MARK}_${process.pid}`;
  try {
    const store = postgresStore({ pool, schema: template });
    await store.open();
    await store.close();
    /** @param {string[]} args */
    const dump = (args) =>
      execFileSync('pg_dump', ['--no-owner', '--no-privileges', ...args, url], { encoding: 'utf8', stdio: 'pipe' });
    const ddl = dump(['--schema-only', '--schema', template]);
    // The rows the migrations write (their journal, the feed's head) come with the tables.
    const rows = dump(['--data-only', '--inserts', '--schema', template]);
    return statementsOf(`${ddl}\n${rows}`).replaceAll(template, SCHEMA_MARK);
  } catch {
    return null;
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS ${template} CASCADE`).catch(() => undefined);
    await pool.end();
  }
}

/**
 * A dump without its comments, psql commands and session settings: the statements alone.
 * @param {string} dump
 */
function statementsOf(dump) {
  return dump
    .split('\n')
    .filter((line) => !/^(--|\\|SET |SELECT pg_catalog\.set_config)/.test(line))
    .join('\n');
}
