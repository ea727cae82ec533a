import { createHash } from 'node:crypto';
import * as v from 'valibot';
import type { ResolvedDefinition } from '../../machine/definition.js';
import { type FlowLimits, RATE_WINDOW_MOST_MS, type TaskFlow } from '../../machine/flow.js';
import type { CallbackKind, RetryPolicy } from '../../machine/run-types.js';
import { DocketError } from '../../util/errors.js';
import { canonicalJson, deepFreeze, type Json } from '../../util/json.js';
import { formatIssues, nameSchema, strictObject } from '../../util/validation.js';
import { fillPolicy, policySchema } from '../queue/options.js';

const schemaLike = v.custom<v.GenericSchema>(
  (input) => typeof input === 'object' && input !== null && (input as { kind?: unknown }).kind === 'schema',
  'must be a valibot schema',
);

const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
const rateSchema = strictObject({ max: int(1, 100_000), perMs: int(1, RATE_WINDOW_MOST_MS) });
const limitsSchema = { concurrency: v.optional(int(1, 10_000)), rate: v.optional(rateSchema) };
/** `define({ flow })`: the fleet-wide limits of a task and of each of its groups (SPEC section 11). */
const flowSchema = strictObject({ ...limitsSchema, group: v.optional(strictObject(limitsSchema)) });

const definitionSchema = strictObject({
  name: nameSchema,
  version: nameSchema,
  events: v.optional(v.array(v.picklist(['success', 'failure', 'batchSettled']))),
  policy: v.optional(policySchema),
  schema: v.optional(strictObject({ query: v.optional(schemaLike), state: v.optional(schemaLike) })),
  recovery: v.optional(v.picklist(['automatic', 'manual'])),
  limits: v.optional(
    strictObject({
      modelCalls: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000_000))),
      deadlineMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(Number.MAX_SAFE_INTEGER))),
    }),
  ),
  flow: v.optional(flowSchema),
});

const handlerNames = ['execute', 'check', 'validateEvent', 'onSuccess', 'onFailure', 'onBatchSettled'] as const;

export type { ResolvedDefinition };

/** A task definition as `queue.define` takes it. */
export type TaskDefinition = v.InferInput<typeof definitionSchema>;

/** Validates a definition, fills it from the queue's default policy and computes its hash; throws `CONFIG_INVALID`. */
export function resolveDefinition(input: unknown, defaultPolicy: RetryPolicy): ResolvedDefinition {
  const parsed = v.safeParse(definitionSchema, input);
  if (!parsed.success) {
    const issues = formatIssues(parsed.issues);
    throw new DocketError('CONFIG_INVALID', `invalid task definition: ${issues[0]?.path}: ${issues[0]?.message}`, {
      operation: 'queue.define',
      details: { issues },
    });
  }
  const d = parsed.output;
  const events = [...new Set(d.events ?? [])].sort() as CallbackKind[];
  const policy = fillPolicy(d.policy, defaultPolicy, 'definition.policy');
  const recovery = d.recovery ?? 'automatic';
  const limits = { modelCalls: d.limits?.modelCalls ?? null, deadlineMs: d.limits?.deadlineMs ?? null };
  const canonical = {
    name: d.name,
    version: d.version,
    events,
    policy: { attempts: policy.attempts, timeoutMs: policy.timeoutMs, backoff: { ...policy.backoff } },
    recovery,
    limits,
  };
  const hash = createHash('sha256').update(canonicalJson(canonical)).digest('hex');
  return {
    name: d.name,
    version: d.version,
    // Frozen: every run of the task shares them by reference, and a store serialises each once (`runParams`).
    events: deepFreeze(events),
    policy: deepFreeze(policy),
    recovery,
    limits,
    schema: {
      ...(d.schema?.query ? { query: d.schema.query } : {}),
      ...(d.schema?.state ? { state: d.schema.state } : {}),
    },
    hash,
    canonical: canonical as unknown as Json,
    flow: d.flow === undefined ? null : flowOf(d.flow),
  };
}

/** A flow as stored: only the limits given, in a fixed key order (not part of the definition's hash). */
function flowOf(flow: v.InferOutput<typeof flowSchema>): TaskFlow {
  const limits = (l: v.InferOutput<typeof flowSchema>['group']): FlowLimits => ({
    ...(l?.concurrency === undefined ? {} : { concurrency: l.concurrency }),
    ...(l?.rate === undefined ? {} : { rate: { max: l.rate.max, perMs: l.rate.perMs } }),
  });
  return { ...limits(flow), ...(flow.group === undefined ? {} : { group: limits(flow.group) }) };
}

/** Checks that `handlers` only has known handler names, each a function; throws `CONFIG_INVALID`. */
export function assertHandlers(handlers: unknown): void {
  if (handlers === undefined) return;
  if (typeof handlers !== 'object' || handlers === null || Array.isArray(handlers)) {
    throw new DocketError('CONFIG_INVALID', 'handlers must be an object', { operation: 'queue.define' });
  }
  for (const [name, value] of Object.entries(handlers)) {
    if (!(handlerNames as readonly string[]).includes(name)) {
      throw new DocketError('CONFIG_INVALID', `unknown handler ${name}`, {
        operation: 'queue.define',
        details: { path: `handlers.${name}` },
      });
    }
    if (typeof value !== 'function') {
      throw new DocketError('CONFIG_INVALID', `handler ${name} must be a function`, {
        operation: 'queue.define',
        details: { path: `handlers.${name}` },
      });
    }
  }
}
