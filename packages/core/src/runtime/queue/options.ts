import * as v from 'valibot';
import type { CallbackPolicy, RetryPolicy } from '../../machine/run-types.js';
import type { Store } from '../../store/contract.js';
import { DocketError } from '../../util/errors.js';
import { cleanText, formatIssues, nameSchema, strictObject } from '../../util/validation.js';
import { defaultLogger, guardLogger, isLogger, type Logger, SILENT_LOGGER } from '../observe/logger.js';
import type { TelemetryEvent, Tracer } from '../observe/telemetry.js';

const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/** Bounds of a retry policy. */
export const policySchema = strictObject({
  attempts: v.optional(int(1, 1000)),
  timeoutMs: v.optional(int(1, 86_400_000)),
  backoff: v.optional(
    strictObject({
      baseMs: v.optional(int(1, 3_600_000)),
      maxMs: v.optional(int(1, 86_400_000)),
      jitter: v.optional(v.literal('full')),
    }),
  ),
});

const callbackPolicySchema = strictObject({
  attempts: v.optional(int(1, 1000)),
  backoff: v.optional(
    strictObject({
      baseMs: v.optional(int(1, 3_600_000)),
      maxMs: v.optional(int(1, 86_400_000)),
    }),
  ),
});

const storeSchema = v.custom<Store>(
  (input) =>
    typeof input === 'object' &&
    input !== null &&
    typeof (input as Store).open === 'function' &&
    typeof (input as Store).transact === 'function' &&
    typeof (input as Store).claimDue === 'function',
  'store must be a Docket Store',
);

const optionsSchema = strictObject({
  store: storeSchema,
  namespace: v.optional(nameSchema),
  runtime: v.optional(
    strictObject({
      mode: v.optional(v.picklist(['all', 'producer', 'consumer'])),
      concurrency: v.optional(int(0, 1024)),
      callbackConcurrency: v.optional(int(1, 1024)),
      closeGraceMs: v.optional(int(0, 3_600_000)),
      workerId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxBytes(128), cleanText)),
    }),
  ),
  defaults: v.optional(
    strictObject({
      policy: v.optional(policySchema),
      callbackPolicy: v.optional(callbackPolicySchema),
    }),
  ),
  protocol: v.optional(
    strictObject({
      leaseMs: v.optional(int(3000, 86_400_000)),
      heartbeatMs: v.optional(int(1000, 86_400_000)),
      pollMs: v.optional(int(1, 3_600_000)),
      recoveryLimit: v.optional(int(1, 1_000_000)),
    }),
  ),
  limits: v.optional(
    strictObject({
      maxRuns: v.optional(int(1, Number.MAX_SAFE_INTEGER)),
      queryBytes: v.optional(int(1, 64 * 1024 * 1024)),
      stateBytes: v.optional(int(1, 64 * 1024 * 1024)),
      errorBytes: v.optional(int(256, 16 * 1024 * 1024)),
    }),
  ),
  retention: v.optional(
    strictObject({
      runsMs: v.optional(int(0, Number.MAX_SAFE_INTEGER)),
      deadLettersMs: v.optional(int(0, Number.MAX_SAFE_INTEGER)),
      collectEveryMs: v.optional(int(0, 2_147_483_647)),
    }),
  ),
  clock: v.optional(v.custom<Clock>((input) => typeof (input as Clock)?.now === 'function', 'clock needs now()')),
  telemetry: v.optional(
    strictObject({
      sink: v.optional(
        v.custom<(event: TelemetryEvent) => void>((input) => typeof input === 'function', 'sink is a function'),
      ),
      tracer: v.optional(
        v.custom<Tracer>(
          (input) =>
            typeof (input as Tracer)?.startSpan === 'function' && typeof (input as Tracer)?.pageSpan === 'function',
          'tracer needs startSpan() and pageSpan()',
        ),
      ),
    }),
  ),
  logger: v.optional(
    v.custom<Logger | false>(
      (input) => input === false || isLogger(input),
      'logger is false or an object with debug, info, warn and error methods',
    ),
  ),
  logPayloads: v.optional(v.boolean()),
});

/** A source of the current time in epoch milliseconds; tests pass a fake one. */
export interface Clock {
  /** The current time in epoch milliseconds. */
  now(): number;
}

/** The options `createQueue` accepts. */
export type QueueOptions = v.InferInput<typeof optionsSchema>;

/** The options with every default filled in. */
export interface ResolvedQueueOptions {
  store: Store;
  namespace: string;
  runtime: {
    mode: 'all' | 'producer' | 'consumer';
    concurrency: number;
    callbackConcurrency: number;
    closeGraceMs: number;
    workerId: string;
  };
  defaults: { policy: RetryPolicy; callbackPolicy: CallbackPolicy };
  protocol: { leaseMs: number; heartbeatMs: number; pollMs: number; recoveryLimit: number };
  limits: { maxRuns: number | null; queryBytes: number; stateBytes: number; errorBytes: number };
  /** `collectEveryMs`: how often a consumer queue applies retention by itself (0: never; default one hour). */
  retention: { runsMs: number; deadLettersMs: number; collectEveryMs: number };
  clock: Clock;
  telemetry: { sink: ((event: TelemetryEvent) => void) | null; tracer: Tracer | null };
  /** Where the runtime logs (guarded: a throwing logger loses its line, nothing else). */
  logger: Logger;
  /** True when log lines may carry a run's query, state or event payload. */
  logPayloads: boolean;
}

const DAY = 86_400_000;

/** Fills a retry policy from the defaults and checks `maxMs >= baseMs`; throws `CONFIG_INVALID`. */
export function fillPolicy(
  partial: v.InferOutput<typeof policySchema> | undefined,
  base: RetryPolicy,
  where: string,
): RetryPolicy {
  const policy: RetryPolicy = {
    attempts: partial?.attempts ?? base.attempts,
    timeoutMs: partial?.timeoutMs ?? base.timeoutMs,
    backoff: {
      baseMs: partial?.backoff?.baseMs ?? base.backoff.baseMs,
      maxMs: partial?.backoff?.maxMs ?? base.backoff.maxMs,
      jitter: 'full',
    },
  };
  if (policy.backoff.maxMs < policy.backoff.baseMs) {
    throw new DocketError('CONFIG_INVALID', `${where}.backoff.maxMs must be >= baseMs`, {
      operation: 'createQueue',
      details: { path: `${where}.backoff.maxMs` },
    });
  }
  return policy;
}

/** Validates `createQueue` options and fills every default; throws `CONFIG_INVALID` naming the bad path. */
export function resolveQueueOptions(input: unknown): ResolvedQueueOptions {
  const parsed = v.safeParse(optionsSchema, input);
  if (!parsed.success) {
    const issues = formatIssues(parsed.issues);
    throw new DocketError('CONFIG_INVALID', `invalid createQueue options: ${issues[0]?.path}: ${issues[0]?.message}`, {
      operation: 'createQueue',
      details: { issues },
    });
  }
  const o = parsed.output;
  const leaseMs = o.protocol?.leaseMs ?? 30_000;
  const heartbeatMs = o.protocol?.heartbeatMs ?? Math.min(10_000, Math.floor(leaseMs / 3));
  if (heartbeatMs > leaseMs / 3) {
    throw new DocketError('CONFIG_INVALID', 'protocol.heartbeatMs must be at most leaseMs / 3', {
      operation: 'createQueue',
      details: { path: 'protocol.heartbeatMs' },
    });
  }
  const policy = fillPolicy(
    o.defaults?.policy,
    { attempts: 3, timeoutMs: 30_000, backoff: { baseMs: 1000, maxMs: 30_000, jitter: 'full' } },
    'defaults.policy',
  );
  const callbackPolicy: CallbackPolicy = {
    attempts: o.defaults?.callbackPolicy?.attempts ?? 10,
    backoff: {
      baseMs: o.defaults?.callbackPolicy?.backoff?.baseMs ?? 1000,
      maxMs: o.defaults?.callbackPolicy?.backoff?.maxMs ?? 60_000,
    },
  };
  if (callbackPolicy.backoff.maxMs < callbackPolicy.backoff.baseMs) {
    throw new DocketError('CONFIG_INVALID', 'defaults.callbackPolicy.backoff.maxMs must be >= baseMs', {
      operation: 'createQueue',
      details: { path: 'defaults.callbackPolicy.backoff.maxMs' },
    });
  }
  return {
    store: o.store,
    namespace: o.namespace ?? 'default',
    runtime: {
      mode: o.runtime?.mode ?? 'all',
      concurrency: o.runtime?.concurrency ?? 4,
      callbackConcurrency: o.runtime?.callbackConcurrency ?? 4,
      closeGraceMs: o.runtime?.closeGraceMs ?? 30_000,
      workerId: o.runtime?.workerId ?? `${process.pid}-${Math.random().toString(16).slice(2, 10)}`,
    },
    defaults: { policy, callbackPolicy },
    protocol: {
      leaseMs,
      heartbeatMs,
      pollMs: o.protocol?.pollMs ?? 1000,
      recoveryLimit: o.protocol?.recoveryLimit ?? 20,
    },
    limits: {
      maxRuns: o.limits?.maxRuns ?? null,
      queryBytes: o.limits?.queryBytes ?? 262_144,
      stateBytes: o.limits?.stateBytes ?? 65_536,
      errorBytes: o.limits?.errorBytes ?? 32_768,
    },
    retention: {
      runsMs: o.retention?.runsMs ?? 7 * DAY,
      deadLettersMs: o.retention?.deadLettersMs ?? 30 * DAY,
      collectEveryMs: o.retention?.collectEveryMs ?? 3_600_000,
    },
    clock: o.clock ?? { now: () => Date.now() },
    telemetry: { sink: o.telemetry?.sink ?? null, tracer: o.telemetry?.tracer ?? null },
    logger: o.logger === false ? SILENT_LOGGER : guardLogger(o.logger ?? defaultLogger()),
    logPayloads: o.logPayloads ?? false,
  };
}
