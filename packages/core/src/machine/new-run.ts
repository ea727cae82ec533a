import type { Json } from '../util/json.js';
import {
  type CallbackKind,
  type HistoryEntry,
  iso,
  type RetryPolicy,
  type RunParent,
  type RunRecord,
  type StoredTrigger,
} from './run-types.js';

/** What a new run is made of: its identity, its input, its definition's settings and when it is due. */
export interface NewRun {
  runId: string;
  namespace: string;
  taskName: string;
  taskVersion: string;
  definitionHash: string;
  query: Json;
  inputHash: string;
  idempotencyKey: string | null;
  trigger: StoredTrigger | null;
  /** When it becomes claimable: its creation for a plain start, the trigger's time for a time trigger. */
  dueAt: number | null;
  deadlineAt: number | null;
  modelCallLimit: number | null;
  policy: RetryPolicy;
  events: readonly CallbackKind[];
  recovery: RunRecord['recovery'];
  createdAt: number;
  /** -1000..1000; 0 when not given. */
  priority?: number;
  /** The W3C `traceparent` of the start's span, when a tracer gave one. */
  traceParent?: string | null;
  /** The flow-control group; `null` or absent: the default group. */
  group?: string | null;
  /** The run and page that started it as a child; absent: none. */
  parent?: RunParent | null;
}

/**
 * A run as `start` creates it: `pending` (`waiting` with a trigger), reason `STARTED`, revision 1, page 1, no state,
 * no lease. The one place a new run's record is built: the stores that rebuild a fresh run from fewer columns use it.
 */
export function newRun(input: NewRun): RunRecord {
  return {
    runId: input.runId,
    namespace: input.namespace,
    taskName: input.taskName,
    taskVersion: input.taskVersion,
    definitionHash: input.definitionHash,
    // A schedule's run is claimable at once: its slot time has come when it is made.
    status: input.trigger === null || 'schedule' in input.trigger ? 'pending' : 'waiting',
    reason: 'STARTED',
    query: input.query,
    state: null,
    page: 1,
    pageFailures: 0,
    businessFailures: 0,
    scheduledRetries: 0,
    recoveries: 0,
    error: null,
    revision: 1,
    trigger: input.trigger,
    dueAt: input.dueAt,
    deadlineAt: input.deadlineAt,
    modelCallLimit: input.modelCallLimit,
    modelCallsUsed: 0,
    idempotencyKey: input.idempotencyKey,
    inputHash: input.inputHash,
    policy: input.policy,
    events: input.events as CallbackKind[],
    recovery: input.recovery,
    triggerEvent: null,
    fence: 0,
    lease: null,
    createdAt: input.createdAt,
    updatedAt: input.createdAt,
    priority: input.priority ?? 0,
    retries: 0,
    traceParent: input.traceParent ?? null,
    group: input.group ?? null,
    rateLimited: 0,
    parent: input.parent ?? null,
    children: null,
  };
}

/** The first history entry of a new run, written with it. */
export function startedEntry(run: RunRecord): HistoryEntry {
  return { seq: 1, at: iso(run.createdAt), from: null, to: run.status, reason: 'STARTED', actor: 'producer' };
}
