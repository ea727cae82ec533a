import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { planClaim } from '../machine/claim-policy.js';
import {
  type HistoryEntry,
  iso,
  isTerminal,
  type RunInfo,
  type RunRecord,
  type RunStatus,
  type StoredTrigger,
  toRunInfo,
} from '../machine/run-types.js';
import { transitionWrite } from '../machine/run-write.js';
import { transition } from '../machine/state-machine.js';
import type { CreateRunResult, RunWrite } from '../store/contract.js';
import { DocketError } from '../util/errors.js';
import { assertRunId, newRunId } from '../util/ids.js';
import { assertJson, canonicalJson, JSON_STRUCTURE_LIMITS, type Json } from '../util/json.js';
import { formatIssues } from '../util/validation.js';
import type { Engine, RegisteredTask } from './engine.js';
import { executePage, settle } from './execution.js';
import type { WorkerLoop } from './worker.js';

/** What `task.start` takes. */
export interface StartInput<Q> {
  query: Q;
  idempotencyKey?: string;
  trigger?: { at: string | Date } | { event: string };
  limits?: { modelCalls?: number; deadlineAt?: string | Date };
}

/** What `task.cancel` answers. */
export type CancelResult =
  | { found: false; runId: string }
  | { found: true; runId: string; status: RunRecord['status']; revision: number; changed: boolean };

/** Options of `task.run`. */
export interface RunOptions {
  signal?: AbortSignal;
  waitMs?: number;
}

/** The handle `queue.define` returns: start, read, cancel and run the runs of one task definition. */
export interface BatchTask<Q, S> {
  readonly name: string;
  readonly version: string;
  /** Starts a run, or returns the existing one for the same idempotency key and input. */
  start(input: StartInput<Q>): Promise<{ runId: string; created: boolean }>;
  /** Reads a run, `null` when there is none (or it was collected). */
  get(runId: string): Promise<RunInfo<Q, S> | null>;
  /** Cancels a live run; a terminal run is left as it is (`changed: false`). */
  cancel(runId: string): Promise<CancelResult>;
  /** The run's history in `seq` order; `[]` for a missing run. */
  history(runId: string): Promise<HistoryEntry[]>;
  /** Executes this run in this process now, waiting up to `waitMs` for it to be claimable; `null` for a missing run. */
  run(runId: string, options?: RunOptions): Promise<RunInfo<Q, S> | null>;
}

/** Queue-level guards the task API calls before each operation. */
export interface QueueGuards {
  assertUsable(operation: string): void;
  mode(): 'all' | 'producer' | 'consumer';
}

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function parseInstant(value: unknown, path: string, operation: string): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'string' && ISO_WITH_ZONE.test(value)
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

const startSchema = v.strictObject({
  query: v.unknown(),
  idempotencyKey: v.optional(v.pipe(v.string(), v.minLength(1), v.maxBytes(256))),
  trigger: v.optional(
    v.union([
      v.strictObject({ at: v.union([v.string(), v.date()]) }),
      v.strictObject({ event: v.pipe(v.string(), v.minLength(1), v.maxBytes(128)) }),
    ]),
  ),
  limits: v.optional(
    v.strictObject({
      modelCalls: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000_000))),
      deadlineAt: v.optional(v.union([v.string(), v.date()])),
    }),
  ),
});

/** Builds the `BatchTask` of one registered definition. */
export function createBatchTask<Q, S>(
  engine: Engine,
  registered: RegisteredTask,
  guards: QueueGuards,
  workers: () => WorkerLoop | null,
): BatchTask<Q, S> {
  const def = registered.definition;
  const { namespace, store } = engine;

  async function info(run: RunRecord): Promise<RunInfo<Q, S>> {
    return toRunInfo<Q, S>(run, await store.callbackCounts(namespace, run.runId));
  }

  async function load(runId: string, operation: string): Promise<RunRecord | null> {
    assertRunId(runId, operation);
    const run = await store.getRun(namespace, runId);
    if (run && (run.taskName !== def.name || run.taskVersion !== def.version)) {
      throw new DocketError(
        'TASK_IDENTITY_MISMATCH',
        `run ${runId} belongs to ${run.taskName}@${run.taskVersion}, not ${def.name}@${def.version}`,
        { operation, runId },
      );
    }
    return run;
  }

  async function start(input: StartInput<Q>) {
    const operation = 'task.start';
    guards.assertUsable(operation);
    if (guards.mode() === 'consumer') {
      throw new DocketError('MODE_OPERATION_NOT_ALLOWED', 'a consumer queue cannot start runs', { operation });
    }
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
    const { query, idempotencyKey, trigger, limits } = parsed.output;
    const idem = idempotencyKey === undefined ? {} : { idempotencyKey };
    assertJson(query, 'query', { bytes: engine.options.limits.queryBytes, ...JSON_STRUCTURE_LIMITS }, operation);
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
    }
    const deadlineAtGiven =
      limits?.deadlineAt === undefined ? null : parseInstant(limits.deadlineAt, 'limits.deadlineAt', operation);
    const modelCalls = limits?.modelCalls ?? def.limits.modelCalls;
    // Only a start with an idempotency key is ever compared with another, so only it pays for the hash (SHA-256 of
    // canonical JSON, 30 µs on the path to the start's message here).
    const inputHash =
      idempotencyKey === undefined
        ? ''
        : createHash('sha256')
            .update(
              canonicalJson({
                definition: def.hash,
                query,
                trigger: storedTrigger,
                limits: {
                  modelCalls: limits?.modelCalls ?? null,
                  deadlineAt: deadlineAtGiven === null ? null : iso(deadlineAtGiven),
                },
              }),
            )
            .digest('hex');
    const now = engine.now();
    const deadlineAt = deadlineAtGiven ?? (def.limits.deadlineMs === null ? null : now + def.limits.deadlineMs);
    const runId = newRunId(now);
    const status: RunStatus = storedTrigger === null ? 'pending' : 'waiting';
    const run: RunRecord = {
      runId,
      namespace,
      taskName: def.name,
      taskVersion: def.version,
      definitionHash: def.hash,
      status,
      reason: 'STARTED',
      query: query as Json,
      state: null,
      page: 1,
      pageFailures: 0,
      businessFailures: 0,
      scheduledRetries: 0,
      recoveries: 0,
      error: null,
      revision: 1,
      trigger: storedTrigger,
      dueAt: storedTrigger === null ? now : dueAtTrigger,
      deadlineAt,
      modelCallLimit: modelCalls,
      modelCallsUsed: 0,
      idempotencyKey: idempotencyKey ?? null,
      inputHash,
      policy: def.policy,
      events: def.events,
      recovery: def.recovery,
      triggerEvent: null,
      fence: 0,
      lease: null,
      createdAt: now,
      updatedAt: now,
    };
    const history: HistoryEntry = {
      seq: 1,
      at: iso(now),
      from: null,
      to: status,
      reason: 'STARTED',
      actor: 'producer',
    };
    engine.starts(runId);
    let result: CreateRunResult;
    try {
      result = await store.createRun({ run, history, maxRuns: engine.options.limits.maxRuns });
    } catch (error) {
      engine.started(runId, null);
      throw error;
    }
    engine.started(runId, result.kind === 'created' ? { run, history: [history], events: [] } : null);
    if (result.kind === 'capacity') {
      throw new DocketError('CAPACITY_EXCEEDED', `namespace ${namespace} holds limits.maxRuns live runs`, {
        operation,
        ...idem,
        details: { maxRuns: engine.options.limits.maxRuns },
      });
    }
    if (result.kind === 'existing') {
      if (result.run.inputHash !== inputHash || result.run.taskVersion !== def.version) {
        throw new DocketError('IDEMPOTENCY_CONFLICT', 'this idempotency key is used by a run with another input', {
          operation,
          runId: result.run.runId,
          ...idem,
        });
      }
      return { runId: result.run.runId, created: false };
    }
    if (dueAtTrigger !== null) engine.wakeAtTime(dueAtTrigger);
    return { runId, created: true };
  }

  async function cancel(runId: string): Promise<CancelResult> {
    const operation = 'task.cancel';
    guards.assertUsable(operation);
    const existing = await load(runId, operation);
    if (!existing) return { found: false, runId };
    const result = await store.transact<{ run: RunRecord; write: RunWrite | null } | null>(
      namespace,
      runId,
      (_tx, current) => {
        if (current === null) return { write: null, value: null };
        if (isTerminal(current.status)) return { write: null, value: { run: current, write: null } };
        const decision = transitionCancel(current, engine.now());
        return { write: decision, value: { run: decision.run, write: decision } };
      },
      { pure: true },
    );
    if (result === null) return { found: false, runId };
    engine.written(result.write);
    if (result.write) engine.stopLocal(runId, 'cancelled');
    return {
      found: true,
      runId,
      status: result.run.status,
      revision: result.run.revision,
      changed: result.write !== null,
    };
  }

  async function run(runId: string, options: RunOptions = {}): Promise<RunInfo<Q, S> | null> {
    const operation = 'task.run';
    guards.assertUsable(operation);
    if (guards.mode() === 'producer') {
      throw new DocketError('MODE_OPERATION_NOT_ALLOWED', 'a producer queue cannot execute runs', { operation });
    }
    if (options === null || typeof options !== 'object') {
      throw new DocketError('CONFIG_INVALID', 'task.run options must be an object', { operation });
    }
    const waitMs = options.waitMs ?? 0;
    if (!Number.isInteger(waitMs) || waitMs < 0 || waitMs > 3_600_000) {
      throw new DocketError('CONFIG_INVALID', 'waitMs must be an integer in 0..3600000', {
        operation,
        details: { path: 'waitMs' },
      });
    }
    const signal = options.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new DocketError('CONFIG_INVALID', 'signal must be an AbortSignal', {
        operation,
        details: { path: 'signal' },
      });
    }
    if (!registered.handlers)
      throw new DocketError('MODE_OPERATION_NOT_ALLOWED', 'task has no handlers', { operation });
    const windowEnd = Date.now() + waitMs;
    const { pollMs, leaseMs } = engine.options.protocol;
    for (;;) {
      let current = await load(runId, operation);
      if (!current) return null;
      if (isTerminal(current.status) || current.status === 'paused' || current.status === 'pausing')
        return info(current);
      if (signal?.aborted) {
        current =
          (await settle(engine, runId, { type: 'cancel', actor: 'producer', reason: 'CALLER_CANCELLED' })) ?? current;
        engine.stopLocal(runId, 'cancelled');
        return info(current);
      }
      if (current.status === 'running' && current.lease !== null && current.lease.expiresAt <= engine.now()) {
        // Its worker died: recover it here rather than wait for a sweep (a restarted one-shot consumer relies on it).
        await settle(engine, runId, {
          type: 'lease_expired',
          actor: engine.workerActor,
          recoveryLimit: engine.options.protocol.recoveryLimit,
        });
        continue;
      }
      if (current.status === 'running') return info(current);
      const now = engine.now();
      const claimable =
        current.status === 'pending' ||
        current.status === 'blocked' ||
        (current.dueAt !== null && current.dueAt <= now && current.status !== 'waiting') ||
        (current.status === 'waiting' &&
          current.trigger !== null &&
          'at' in current.trigger &&
          current.dueAt !== null &&
          current.dueAt <= now);
      if (claimable) {
        const write = await store.transact<RunWrite | null>(
          namespace,
          runId,
          (_tx, latest) => {
            if (latest === null) return { write: null, value: null };
            const w = planClaim(latest, engine.workerActor, leaseMs, engine.now(), true);
            return { write: w, value: w };
          },
          { pure: true },
        );
        engine.written(write);
        if (write === null || write.run.status !== 'running') {
          if (write === null) {
            const latest = await load(runId, operation);
            if (!latest) return null;
            if (latest.status === 'running' || isTerminal(latest.status)) return info(latest);
          }
          continue;
        }
        const pageRun = execute(write.run);
        await pageRun;
        const after = await load(runId, operation);
        if (!after) return null;
        if (after.status === 'blocked' || after.status === 'waiting') return info(after);
        continue;
      }
      // Not claimable yet: wait within the window for the trigger time, an event or the retry's due time.
      const remaining = windowEnd - Date.now();
      if (remaining <= 0) return info(current);
      const untilDue = current.dueAt === null ? pollMs : Math.max(1, current.dueAt - engine.now());
      const aborted = await sleepCancellable(Math.min(pollMs, untilDue, remaining), signal);
      if (aborted) continue;
    }

    function execute(claimed: RunRecord): Promise<void> {
      const promise = executePage(engine, registered, claimed, signal);
      return workers()?.track(promise) ?? promise;
    }
  }

  return {
    name: def.name,
    version: def.version,
    start,
    async get(runId) {
      guards.assertUsable('task.get');
      const run = await load(runId, 'task.get');
      return run ? info(run) : null;
    },
    cancel,
    async history(runId) {
      guards.assertUsable('task.history');
      const run = await load(runId, 'task.history');
      return run ? store.getHistory(namespace, runId) : [];
    },
    run,
  };
}

function transitionCancel(current: RunRecord, now: number) {
  const decision = transition(current, { type: 'cancel', actor: 'producer', reason: 'CANCELLED' }, now);
  if (!decision.ok) throw new Error(`internal: cancel refused: ${decision.message}`);
  return transitionWrite(decision);
}

function sleepCancellable(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(true);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(false);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(true);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
