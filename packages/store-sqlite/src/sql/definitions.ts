import type { Json } from '@docket/core';
import {
  type DefinitionRecord,
  definitionConflict,
  registeredTask,
  rowToTask,
  type TaskRecord,
} from '@docket/core/store';
import type Database from 'better-sqlite3';
import type { SqliteContext } from '../context.js';
import { selectTask, writeTask } from '../flow/flow.js';

/** The statements `definitionStatements` prepares. */
export interface DefinitionStatements {
  selectDefinition: Database.Statement<[string, string, string], { hash: string; definition: string }>;
  insertDefinition: Database.Statement<[Record<string, string | number>]>;
}

/** The definitions' statements, prepared once per connection. */
export function definitionStatements(db: Database.Database): DefinitionStatements {
  return {
    selectDefinition: db.prepare<[string, string, string], { hash: string; definition: string }>(
      'SELECT hash, definition FROM docket_definitions WHERE namespace = ? AND name = ? AND version = ?',
    ),
    insertDefinition: db.prepare<[Record<string, string | number>]>(
      'INSERT INTO docket_definitions (namespace, name, version, hash, definition, created_at) VALUES (@namespace, @name, @version, @hash, @definition, @created_at)',
    ),
  };
}

/**
 * `Store.registerDefinition`: inserts the definition once (another hash under the same identity is a conflict), and
 * writes the task's record with the definition's flow limits.
 */
export async function registerDefinition(ctx: SqliteContext, definition: DefinitionRecord): Promise<void> {
  const conflict = await ctx.write('queue.ready', ({ s }) => {
    const existing = s.definitions.selectDefinition.get(definition.namespace, definition.name, definition.version);
    if (existing && existing.hash !== definition.hash) return true;
    const now = Date.now();
    const current = selectTask(s, definition.namespace, definition.name);
    writeTask(s, current, registeredTask(current, definition, now));
    if (existing) return false;
    s.definitions.insertDefinition.run({
      namespace: definition.namespace,
      name: definition.name,
      version: definition.version,
      hash: definition.hash,
      definition: JSON.stringify(definition.definition),
      created_at: now,
    });
    return false;
  });
  if (conflict) throw definitionConflict(definition);
}

/** `Store.getDefinition`: one registered definition's hash and canonical form. */
export function getDefinition(
  ctx: SqliteContext,
  namespace: string,
  name: string,
  version: string,
): Promise<Pick<DefinitionRecord, 'hash' | 'definition'> | null> {
  return ctx.read('store.getDefinition', ({ s }) => {
    const row = s.definitions.selectDefinition.get(namespace, name, version);
    return row === undefined ? null : { hash: row.hash, definition: JSON.parse(row.definition) as Json };
  });
}

/** `Store.listTasks`: the namespace's tasks by name. */
export function listTasks(ctx: SqliteContext, namespace: string): Promise<TaskRecord[]> {
  return ctx.read('operator.tasks.list', ({ s }) => s.flow.listTasks.all(namespace).map(rowToTask));
}
