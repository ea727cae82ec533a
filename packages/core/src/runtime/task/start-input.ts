import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { newRun, startedEntry } from '../../machine/new-run.js';
import { type HistoryEntry, iso, type RunRecord, type StoredTrigger } from '../../machine/run-types.js';
import type { CreateRunResult } from '../../store/contract.js';
import { DocketError } from '../../util/errors.js';
import { newRunId } from '../../util/ids.js';
import { canonicalJson, JSON_STRUCTURE_LIMITS, type Json, jsonSnapshot } from '../../util/json.js';
import { cleanText, formatIssues, strictObject } from '../../util/validation.js';
import type { Engine } from '../queue/engine.js';
import type { ResolvedDefinition } from './definition.js';

/** What `task.start` takes. */
export interface StartInput<Q> {
  query: Q;
  idempotencyKey?: string;
  /**
   * A time, or an event type; `match` lists fields the event's payload must hold with equal values (checked in every
   * queue that delivers; a mismatch fails the run with `TRIGGER_INVALID`).
   */
  trigger?: { at: string | Date } | { event: string; match?: { [key: string]: Json } };
  limits?: { modelCalls?: number; deadlineAt?: string | Date };
  /** Among due runs, higher is claimed first: an integer -1000..1000, 0 by default; not part of the idempotency input. */
  priority?: number;
  /**
   * The flow-control group (1..256 bytes, no NUL): the task's `flow.group` limits apply to each group apart; runs
   * without one share the default group. Not part of the idempotency input.
   */
  group?: string;
}

/** A checked start, ready for the store: the new run, its first history entry, and what errors about it carry. */
export interface PreparedStart {
  run: RunRecord;
  history: HistoryEntry;
  /** `{ idempotencyKey }` when the start has one, for the errors about it. */
  idem: { idempotencyKey?: string };
}

const ISO_WITH_ZONE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** Whether an ISO time's calendar fields exist (no 30 February, no hour 24): `Date.parse` rolls them over silently. */
function realCalendarTime(text: string): boolean {
  const m = ISO_WITH_ZONE.exec(text);
  if (m === null) return false;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as number[];
  const d = new Date(Date.UTC(year as number, (month as number) - 1, day, hour, minute, second));
  return (
    d.getUTCFullYear() === year &&
    d.getUTCMonth() === (month as number) - 1 &&
    d.getUTCDate() === day &&
    d.getUTCHours() === hour &&
    d.getUTCMinutes() === minute &&
    d.getUTCSeconds() === second
  );
}

/** The limits of a trigger's `match`: a few fields to compare, stored with the run. */
const MATCH_LIMITS = { bytes: 4096, nodes: 256, depth: 8 };

const startSchema = strictObject({
  query: v.unknown(),
  idempotencyKey: v.optional(v.pipe(v.string(), v.minLength(1), v.maxBytes(256), cleanText)),
  trigger: v.optional(
    v.union([
      strictObject({ at: v.union([v.string(), v.date()]) }),
      strictObject({
        event: v.pipe(v.string(), v.minLength(1), v.maxBytes(128), cleanText),
        match: v.optional(v.record(v.string(), v.unknown())),
      }),
    ]),
  ),
  limits: v.optional(
    strictObject({
      modelCalls: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000_000))),
      deadlineAt: v.optional(v.union([v.string(), v.date()])),
    }),
  ),
  priority: v.optional(v.pipe(v.number(), v.integer(), v.minValue(-1000), v.maxValue(1000))),
  group: v.optional(v.pipe(v.string(), v.minLength(1), v.maxBytes(256), cleanText)),
});

/** An instant given as a `Date` or an ISO-8601 string with a zone, in epoch ms; anything else is `CONFIG_INVALID`. */
export function parseInstant(value: unknown, path: string, operation: string): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'string' && realCalendarTime(value)
        ? Date.parse(value)
        : Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new DocketError('CONFIG_INVALID', `${path} must be a valid Date or an ISO-8601 time with a zone`, {
      operation,
      details: { path },
    });
  }
  return ms;
}

/**
 * Checks one start's input against the options, the JSON limits and `schema.query`, and builds its run (with the
 * start span's `traceParent`, if any): every error a bad input can get is thrown here, before anything is written.
 */
export function prepareStart(
  engine: Engine,
  def: ResolvedDefinition,
  input: unknown,
  operation: string,
  traceParent: string | null = null,
): PreparedStart {
  const parsed = v.safeParse(startSchema, input);
  if (!parsed.success) {
    const issues = formatIssues(parsed.issues);
    throw new DocketError('CONFIG_INVALID', `invalid start input: ${issues[0]?.path}: ${issues[0]?.message}`, {
      operation,
      details: { issues },
    });
  }
  if (!('query' in (input as object))) {
    throw new DocketError('JSON_INVALID', 'query is required', { operation, details: { path: 'query' } });
  }
  const { idempotencyKey, trigger, limits, priority, group } = parsed.output;
  const idem = idempotencyKey === undefined ? {} : { idempotencyKey };
  const limitsOfQuery = { bytes: engine.options.limits.queryBytes, ...JSON_STRUCTURE_LIMITS };
  const query = jsonSnapshot(parsed.output.query, 'query', limitsOfQuery, operation);
  if (def.schema.query) {
    const checked = v.safeParse(def.schema.query, query);
    if (!checked.success) {
      throw new DocketError('JSON_INVALID', 'query does not match schema.query', {
        operation,
        ...idem,
        details: { issues: formatIssues(checked.issues) },
      });
    }
  }
  let storedTrigger: StoredTrigger | null = null;
  let dueAtTrigger: number | null = null;
  if (trigger && 'at' in trigger) {
    dueAtTrigger = parseInstant(trigger.at, 'trigger.at', operation);
    storedTrigger = { at: iso(dueAtTrigger) };
  } else if (trigger && 'event' in trigger) {
    storedTrigger = { event: trigger.event };
    if (trigger.match !== undefined) {
      const match = jsonSnapshot(trigger.match, 'trigger.match', MATCH_LIMITS, operation) as { [key: string]: Json };
      storedTrigger = { event: trigger.event, match };
    }
  }
  const deadlineAtGiven =
    limits?.deadlineAt === undefined ? null : parseInstant(limits.deadlineAt, 'limits.deadlineAt', operation);
  const modelCalls = limits?.modelCalls ?? def.limits.modelCalls;
  const inputHash =
    idempotencyKey === undefined
      ? ''
      : startInputHash(def, query as Json, storedTrigger, limits?.modelCalls ?? null, deadlineAtGiven);
  const now = engine.now();
  const run = newRun({
    runId: newRunId(now),
    namespace: engine.namespace,
    taskName: def.name,
    taskVersion: def.version,
    definitionHash: def.hash,
    query: query as Json,
    inputHash,
    idempotencyKey: idempotencyKey ?? null,
    trigger: storedTrigger,
    dueAt: storedTrigger === null ? now : dueAtTrigger,
    deadlineAt: deadlineAtGiven ?? (def.limits.deadlineMs === null ? null : now + def.limits.deadlineMs),
    modelCallLimit: modelCalls,
    policy: def.policy,
    events: def.events,
    recovery: def.recovery,
    createdAt: now,
    priority: priority ?? 0,
    traceParent,
    group: group ?? null,
  });
  return { run, history: startedEntry(run), idem };
}

/**
 * The hash a start's idempotency key is compared by: the definition, query, trigger and limits as canonical JSON.
 * Only a start with a key is ever compared with another, so only it pays for the hash (SHA-256, ~30 µs).
 */
function startInputHash(
  def: ResolvedDefinition,
  query: Json,
  trigger: StoredTrigger | null,
  givenModelCalls: number | null,
  deadlineAt: number | null,
): string {
  const limits = { modelCalls: givenModelCalls, deadlineAt: deadlineAt === null ? null : iso(deadlineAt) };
  return createHash('sha256')
    .update(canonicalJson({ definition: def.hash, query, trigger, limits }))
    .digest('hex');
}

/**
 * Turns the store's answer to a prepared start into `start`'s: the new run, the existing run for the same key and
 * input, or `CAPACITY_EXCEEDED` / `IDEMPOTENCY_CONFLICT`.
 */
export function startAnswer(
  engine: Engine,
  prepared: PreparedStart,
  result: CreateRunResult,
  operation: string,
): { runId: string; created: boolean } {
  const { run, idem } = prepared;
  if (result.kind === 'capacity') {
    throw new DocketError('CAPACITY_EXCEEDED', `namespace ${run.namespace} holds limits.maxRuns live runs`, {
      operation,
      ...idem,
      details: { maxRuns: engine.options.limits.maxRuns },
    });
  }
  if (result.kind === 'existing') {
    if (result.run.inputHash !== run.inputHash || result.run.taskVersion !== run.taskVersion) {
      throw new DocketError('IDEMPOTENCY_CONFLICT', 'this idempotency key is used by a run with another input', {
        operation,
        runId: result.run.runId,
        ...idem,
      });
    }
    return { runId: result.run.runId, created: false };
  }
  if (run.status === 'waiting' && run.dueAt !== null) engine.wakeAtTime(run.dueAt);
  return { runId: run.runId, created: true };
}
