import type { DefinitionRecord, TaskRecord } from '../contract.js';
import { definitionConflict } from '../definitions.js';
import { registeredTask } from '../flow.js';
import { clone, key, type MemoryState } from './state.js';

/** `Store.registerDefinition`: the definition once, and the task's record with its latest flow limits. */
export function registerDefinition(m: MemoryState, definition: DefinitionRecord): Promise<void> {
  return m.exclusive(() => {
    const k = `${definition.namespace}\u0000${definition.name}\u0000${definition.version}`;
    const existing = m.definitions.get(k);
    if (existing && existing.hash !== definition.hash) throw definitionConflict(definition);
    if (!existing) m.definitions.set(k, clone(definition));
    const tk = key(definition.namespace, definition.name);
    m.tasks.set(tk, registeredTask(m.tasks.get(tk) ?? null, clone(definition), Date.now()));
  });
}

/** `Store.getDefinition`: one registered definition's hash and canonical form. */
export async function getDefinition(
  m: MemoryState,
  namespace: string,
  name: string,
  version: string,
): Promise<Pick<DefinitionRecord, 'hash' | 'definition'> | null> {
  const found = m.definitions.get(`${namespace}\u0000${name}\u0000${version}`);
  return found === undefined ? null : { hash: found.hash, definition: clone(found.definition) };
}

/** `Store.listTasks`: the namespace's tasks by name. */
export async function listTasks(m: MemoryState, namespace: string): Promise<TaskRecord[]> {
  return [...m.tasks.values()]
    .filter((task) => task.namespace === namespace)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(clone);
}
