import type * as v from 'valibot';
import type { Json } from '../util/json.js';
import type { TaskFlow } from './flow.js';
import type { CallbackKind, RetryPolicy } from './run-types.js';

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
