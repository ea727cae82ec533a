import type * as v from 'valibot';
import type { Json } from '../util/json.js';
import type { TaskFlow } from './flow.js';
import type { CallbackKind, RetryPolicy } from './run-types.js';

/**
 * A definition rebuilt from its stored canonical form (`resolveDefinition`'s `canonical`): every setting a new run
 * copies, without the schemas (which are not stored) or the flow limits.
 */
export function storedDefinition(stored: { hash: string; definition: Json }): ResolvedDefinition {
  const c = stored.definition as unknown as Omit<ResolvedDefinition, 'schema' | 'hash' | 'canonical' | 'flow'>;
  return {
    name: c.name,
    version: c.version,
    events: c.events,
    policy: c.policy,
    recovery: c.recovery,
    limits: c.limits,
    schema: {},
    hash: stored.hash,
    canonical: stored.definition,
    flow: null,
  };
}

/** A definition with every default filled, plus its identity hash. */
export interface ResolvedDefinition {
  name: string;
  version: string;
  events: CallbackKind[];
  policy: RetryPolicy;
  recovery: 'automatic' | 'manual';
  limits: { modelCalls: number | null; deadlineMs: number | null };
  schema: { query?: v.GenericSchema; state?: v.GenericSchema };
  /** sha256 over the canonical JSON of name, version, events, filled policy, recovery and limits. */
  hash: string;
  /** The canonical JSON the hash covers. */
  canonical: Json;
  /** Fleet-wide flow limits (`define({ flow })`), or `null`; not part of the hash. */
  flow: TaskFlow | null;
}
