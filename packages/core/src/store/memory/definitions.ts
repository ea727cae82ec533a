import type { DefinitionRecord } from '../contract.js';
import { definitionConflict } from '../definitions.js';
import { clone, type MemoryState } from './state.js';

/** `Store.registerDefinition`. */
export function registerDefinition(m: MemoryState, definition: DefinitionRecord): Promise<void> {
  return m.exclusive(() => {
    const k = `${definition.namespace}\u0000${definition.name}\u0000${definition.version}`;
    const existing = m.definitions.get(k);
    if (existing && existing.hash !== definition.hash) throw definitionConflict(definition);
    if (!existing) m.definitions.set(k, clone(definition));
  });
}
