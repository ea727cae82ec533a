import { DocketError } from '../util/errors.js';
import type { DefinitionRecord } from './contract.js';

/** `DEFINITION_HASH_CONFLICT`: a definition registered under the same namespace, name and version with another hash. */
export function definitionConflict(definition: DefinitionRecord, how = 'with another definition'): DocketError {
  return new DocketError(
    'DEFINITION_HASH_CONFLICT',
    `task ${definition.name}@${definition.version} is already registered ${how}`,
    { operation: 'queue.ready', details: { name: definition.name, version: definition.version } },
  );
}
