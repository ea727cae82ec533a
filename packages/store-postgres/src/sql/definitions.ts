import { type DefinitionRecord, definitionConflict } from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PgContext } from '../context.js';
import { rowsOf } from '../writes/run-writes.js';

/** `Store.registerDefinition`: inserts the definition once; another hash under the same identity is a conflict. */
export async function registerDefinition(ctx: PgContext, definition: DefinitionRecord): Promise<void> {
  const stored = () =>
    rowsOf<{ hash: string }>(
      ctx.live(),
      sql`SELECT hash FROM ${ctx.q.definitions} WHERE namespace = ${definition.namespace} AND name = ${definition.name} AND version = ${definition.version}`,
    );
  const existing = await stored();
  if (existing[0] && existing[0].hash !== definition.hash) throw definitionConflict(definition);
  if (existing[0]) return;
  await ctx.live().execute(
    sql`INSERT INTO ${ctx.q.definitions} (namespace, name, version, hash, definition, created_at)
          VALUES (${definition.namespace}, ${definition.name}, ${definition.version}, ${definition.hash}, ${JSON.stringify(definition.definition)}, ${Date.now()})
          ON CONFLICT DO NOTHING`,
  );
  if ((await stored())[0]?.hash !== definition.hash) throw definitionConflict(definition, 'concurrently');
}
