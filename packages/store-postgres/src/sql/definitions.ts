import type { Json } from '@docket/core';
import {
  type DefinitionRecord,
  definitionConflict,
  registeredTask,
  rowToTask,
  type TaskRecord,
  type TaskRow,
} from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PgContext } from '../context.js';
import { taskRecords, writeTask } from '../flow/task-rows.js';
import { rowsOf } from '../writes/run-writes.js';

/**
 * `Store.registerDefinition`: inserts the definition once (another hash under the same identity is a conflict), and
 * writes the task's record with its flow limits.
 */
export async function registerDefinition(ctx: PgContext, definition: DefinitionRecord): Promise<void> {
  const stored = () =>
    rowsOf<{ hash: string }>(
      ctx.live(),
      sql`SELECT hash FROM ${ctx.q.definitions} WHERE namespace = ${definition.namespace} AND name = ${definition.name} AND version = ${definition.version}`,
    );
  const existing = await stored();
  if (existing[0] && existing[0].hash !== definition.hash) throw definitionConflict(definition);
  await registerTask(ctx, definition);
  if (!existing[0]) {
    await ctx.live().execute(
      sql`INSERT INTO ${ctx.q.definitions} (namespace, name, version, hash, definition, created_at)
          VALUES (${definition.namespace}, ${definition.name}, ${definition.version}, ${definition.hash}, ${JSON.stringify(definition.definition)}, ${Date.now()})
          ON CONFLICT DO NOTHING`,
    );
    if ((await stored())[0]?.hash !== definition.hash) throw definitionConflict(definition, 'concurrently');
  }
  // Committed: the version's runs may now be written narrow (see `task-versions.ts`).
  const { namespace, name, version, hash } = definition;
  ctx.tables.versions.remember(namespace, name, version, hash, definition.definition);
}

/** Writes the task's record with the definition's flow limits, under a lock of its own (`registeredTask`). */
async function registerTask(ctx: PgContext, definition: DefinitionRecord): Promise<void> {
  const { namespace, name } = definition;
  const registered = await ctx.inTransaction('queue.ready', async (tx) => {
    await rowsOf(tx, {
      text: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))',
      params: [`${namespace}:task:${name}`],
    });
    const current = (await taskRecords(tx, ctx.tables, namespace, [name], true)).get(name) ?? null;
    const task = registeredTask(current, definition, Date.now());
    await writeTask(tx, ctx.tables, task);
    return task;
  });
  ctx.rememberFlowState(registered);
}

/** `Store.getDefinition`: one registered definition's hash and canonical form. */
export async function getDefinition(
  ctx: PgContext,
  namespace: string,
  name: string,
  version: string,
): Promise<Pick<DefinitionRecord, 'hash' | 'definition'> | null> {
  const rows = await rowsOf<{ hash: string; definition: string }>(
    ctx.live(),
    sql`SELECT hash, definition FROM ${ctx.q.definitions} WHERE namespace = ${namespace} AND name = ${name} AND version = ${version}`,
  );
  const row = rows[0];
  if (row === undefined) return null;
  const found = { hash: row.hash, definition: JSON.parse(row.definition) as Json };
  ctx.tables.versions.remember(namespace, name, version, found.hash, found.definition);
  return found;
}

/** `Store.listTasks`: the namespace's tasks by name. */
export async function listTasks(ctx: PgContext, namespace: string): Promise<TaskRecord[]> {
  const rows = await rowsOf<TaskRow>(ctx.live(), {
    text: `SELECT * FROM ${ctx.tables.tasks} WHERE namespace = $1 ORDER BY name`,
    params: [namespace],
  });
  return rows.map(rowToTask);
}
