import { type DefinitionRecord, definitionConflict } from '@docket/core/store';
import type { SqliteContext } from '../context.js';

/** `Store.registerDefinition`: inserts the definition once; another hash under the same identity is a conflict. */
export async function registerDefinition(ctx: SqliteContext, definition: DefinitionRecord): Promise<void> {
  const conflict = await ctx.write('queue.ready', ({ s }) => {
    const existing = s.selectDefinition.get(definition.namespace, definition.name, definition.version);
    if (existing) return existing.hash !== definition.hash;
    s.insertDefinition.run({
      namespace: definition.namespace,
      name: definition.name,
      version: definition.version,
      hash: definition.hash,
      definition: JSON.stringify(definition.definition),
      created_at: Date.now(),
    });
    return false;
  });
  if (conflict) throw definitionConflict(definition);
}
