import { inject } from 'vitest';
import { SCHEMA_MARK } from './postgres-template.mjs';

/**
 * Creates `schema` for a test on the server `query` reaches: as the store migrates it, from the DDL the global setup
 * provides (`postgresSchemaSql`), in one message; without that DDL, empty, and the store migrates it when it opens.
 * Opening an empty schema is what the migration tests do themselves.
 * @param {(text: string) => Promise<unknown>} query
 * @param {string} schema
 */
export async function createTestSchema(query, schema) {
  const sql = /** @type {string | null} */ (inject(/** @type {never} */ ('postgresSchemaSql')));
  await query(sql ? `BEGIN;\n${sql.replaceAll(SCHEMA_MARK, schema)};\nCOMMIT` : `CREATE SCHEMA "${schema}"`);
}
