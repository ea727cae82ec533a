import { type DefinitionRecord, definitionConflict } from '@docket/core/store';
import type Database from 'better-sqlite3';
import type { SqliteContext } from '../context.js';

/** The statements `definitionStatements` prepares. */
export interface DefinitionStatements {
  selectDefinition: Database.Statement<[string, string, string], { hash: string }>;
  insertDefinition: Database.Statement<[Record<string, string | number>]>;
}

/** The definitions' statements, prepared once per connection. */
export function definitionStatements(db: Database.Database): DefinitionStatements {
  return {
    selectDefinition: db.prepare<[string, string, string], { hash: string }>(
      'SELECT hash FROM docket_definitions WHERE namespace = ? AND name = ? AND version = ?',
    ),
    insertDefinition: db.prepare<[Record<string, string | number>]>(
      'INSERT INTO docket_definitions (namespace, name, version, hash, definition, created_at) VALUES (@namespace, @name, @version, @hash, @definition, @created_at)',
    ),
  };
}

/** `Store.registerDefinition`: inserts the definition once; another hash under the same identity is a conflict. */
export async function registerDefinition(ctx: SqliteContext, definition: DefinitionRecord): Promise<void> {
  const conflict = await ctx.write('queue.ready', ({ s }) => {
    const existing = s.definitions.selectDefinition.get(definition.namespace, definition.name, definition.version);
    if (existing) return existing.hash !== definition.hash;
    s.definitions.insertDefinition.run({
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
