import type { Json } from '../util/json.js';

/** Every status a run can have. */
export const RUN_STATUSES = [
  'waiting',
  'pending',
  'running',
  'retrying',
  'blocked',
  'pausing',
  'paused',
  'success',
  'failed',
  'cancelled',
] as const;

/** A run's status. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The statuses nothing leaves. */
export const TERMINAL_STATUSES: ReadonlySet<RunStatus> = new Set(['success', 'failed', 'cancelled']);

/** True when nothing can change a run in this status any more. */
export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

/** Every reason a transition can give. */
export const REASONS = [
  'STARTED',
  'TIME_REACHED',
  'EVENT_RECEIVED',
  'TRIGGER_INVALID',
  'CLAIMED',
  'BUSINESS_STATE',
  'BUSINESS_CHANGED',
  'PAGE_COMMITTED',
  'COMPLETED',
  'ATTEMPT_FAILED',
  'ATTEMPT_TIMEOUT',
  'ATTEMPTS_EXHAUSTED',
  'HANDLER_CONTRACT_INVALID',
  'LEASE_EXPIRED',
  'RECOVERY_EXHAUSTED',
  'RECOVERY_REQUIRED',
  'RELEASED',
  'MODEL_CALL_BUDGET',
  'DEADLINE',
  'CANCELLED',
  'CALLER_CANCELLED',
  'OPERATOR_STOP',
  'PAUSE_REQUESTED',
  'PAUSED',
  'RESUMED',
  'CAPACITY',
  'NON_RETRYABLE',
  'OPERATOR_RETRY',
  'RATE_LIMITED',
  'CHILDREN_STARTED',
  'CHILDREN_SETTLED',
  'CHILD_FAILED',
  'PARENT_FAILED',
  'PARENT_CANCELLED',
] as const;

/** An UPPER_SNAKE reason code attached to every transition. */
export type Reason = (typeof REASONS)[number];

/** The kinds of callback event a definition can declare. */
export type CallbackKind = 'success' | 'failure' | 'batchSettled';

/** Every status a callback event can have. */
export type CallbackEventStatus = 'pending' | 'retrying' | 'delivering' | 'delivered' | 'dead_letter';

/** A retry backoff: the delay after failure n is `floor(random * (min(maxMs, baseMs * 2^(n-1)) + 1))`. */
export interface Backoff {
  baseMs: number;
  maxMs: number;
  jitter: 'full';
}

/** How often and how long a page may be attempted. */
export interface RetryPolicy {
  attempts: number;
  timeoutMs: number;
  backoff: Backoff;
}

/** How callback deliveries are retried before they become dead letters. */
export interface CallbackPolicy {
  attempts: number;
  backoff: { baseMs: number; maxMs: number };
}

/**
 * A run's trigger as stored: an absolute time, an event type (with, optionally, the fields its payload must hold),
 * or the schedule slot that made it.
 */
export type StoredTrigger =
  | { at: string }
  | { event: string; match?: { [key: string]: Json } }
  | { schedule: string; at: string };

/** The error summary kept on a run. */
export interface RunError {
  code: string;
  name: string;
  message: string;
  truncated: boolean;
}

/** A run's lease: who holds it, its fencing token and when it expires (ms since epoch). */
export interface Lease {
  owner: string;
  token: number;
  expiresAt: number;
}

/**
 * A run as stores persist it. Core builds every new version of it; a store only compares `revision` (and the
 * lease token) and writes it. Times are milliseconds since the epoch.
 */
export interface RunRecord {
  runId: string;
  namespace: string;
  taskName: string;
  taskVersion: string;
  definitionHash: string;
  status: RunStatus;
  reason: Reason;
  query: Json;
  state: Json | null;
  page: number;
  /** Failures of the current page; `attempt` is this + 1. */
  pageFailures: number;
  businessFailures: number;
  scheduledRetries: number;
  /** Consecutive lease recoveries since the last committed page. */
  recoveries: number;
  error: RunError | null;
  revision: number;
  trigger: StoredTrigger | null;
  dueAt: number | null;
  deadlineAt: number | null;
  modelCallLimit: number | null;
  modelCallsUsed: number;
  idempotencyKey: string | null;
  /**
   * Canonical hash of what the idempotency key promises: query, trigger, limits and definition hash (SHA-256, hex).
   * Empty for a run started without an idempotency key: nothing is ever compared with it.
   */
  inputHash: string;
  policy: RetryPolicy;
  events: CallbackKind[];
  recovery: 'automatic' | 'manual';
  /** The event that fired (or failed) this run's event trigger: kept so a redelivery is recognised. */
  triggerEvent: ReceivedEvent | null;
  /** The fencing token of the latest claim; rises with every claim, never reused. */
  fence: number;
  lease: Lease | null;
  createdAt: number;
  updatedAt: number;
  /** Among due runs, higher is claimed first: -1000..1000, 0 by default. */
  priority: number;
  /** How often an operator retried this run after it failed (`OPERATOR_RETRY`). */
  retries: number;
  /** The W3C `traceparent` of the start that made this run, when a tracer gave one; it never changes. */
  traceParent: string | null;
  /** The flow-control group it was started in (`start({ group })`), or `null` (the default group); never changes. */
  group: string | null;
  /** How many times a `RetryAfterError` hold of its group or task sent it back (`RATE_LIMITED`). */
  rateLimited: number;
  /** The run whose page started this one (`ctx.next(state, { children })`), or `null`; never changes. */
  parent: RunParent | null;
  /** The children its pages started, counted (`null` until a page starts some). */
  children: ChildCounts | null;
}

/** Which run and page started a child run. */
export interface RunParent {
  runId: string;
  /** The parent's page whose commit created the child. */
  page: number;
}

/**
 * A parent's children, counted: fan-in is one counter on the parent (`settled` rises as each child first settles),
 * never a scan of the children. `total` and `settled` count every page's children; `page` and `childFailure` are the
 * latest page's that started some.
 */
export interface ChildCounts {
  total: number;
  settled: number;
  /** The page that started the latest children (its next page sees them as `ctx.children`). */
  page: number;
  /** `'fail'`: the first child to end `failed` or `cancelled` fails the parent (`CHILD_FAILED`). */
  childFailure: 'continue' | 'fail';
}

/**
 * A copy of a run record, field by field in the order of the interface (and of `rowToRun`). Every record made this
 * way, or by a literal in that order, shares one hidden class in V8, so the functions each run passes through stay
 * monomorphic; a spread (`{ ...run }`) gives each generation of copies a class of its own, and copies them slowly.
 */
export function copyRun(run: RunRecord): RunRecord {
  return {
    runId: run.runId,
    namespace: run.namespace,
    taskName: run.taskName,
    taskVersion: run.taskVersion,
    definitionHash: run.definitionHash,
    status: run.status,
    reason: run.reason,
    query: run.query,
    state: run.state,
    page: run.page,
    pageFailures: run.pageFailures,
    businessFailures: run.businessFailures,
    scheduledRetries: run.scheduledRetries,
    recoveries: run.recoveries,
    error: run.error,
    revision: run.revision,
    trigger: run.trigger,
    dueAt: run.dueAt,
    deadlineAt: run.deadlineAt,
    modelCallLimit: run.modelCallLimit,
    modelCallsUsed: run.modelCallsUsed,
    idempotencyKey: run.idempotencyKey,
    inputHash: run.inputHash,
    policy: run.policy,
    events: run.events,
    recovery: run.recovery,
    triggerEvent: run.triggerEvent,
    fence: run.fence,
    lease: run.lease,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    priority: run.priority,
    retries: run.retries,
    traceParent: run.traceParent,
    group: run.group,
    rateLimited: run.rateLimited,
    parent: run.parent,
    children: run.children,
  };
}

/** A trigger event as a run keeps it: its id, type and the hash of its whole content. */
export interface ReceivedEvent {
  id: string;
  type: string;
  hash: string;
}

/** One transition in a run's history. */
export interface HistoryEntry {
  seq: number;
  at: string;
  from: RunStatus | null;
  to: RunStatus;
  reason: Reason;
  actor: string;
  detail?: Json;
}

/** A callback event row as stores persist it. */
export interface CallbackEventRecord {
  eventId: string;
  namespace: string;
  runId: string;
  taskName: string;
  taskVersion: string;
  kind: CallbackKind;
  batchId: string;
  sequence: number;
  status: CallbackEventStatus;
  deliveryAttempt: number;
  replayGeneration: number;
  revision: number;
  dueAt: number;
  timestamp: string;
  query: Json;
  state: Json | null;
  error: RunError | null;
  lastError: RunError | null;
  lease: Lease | null;
  createdAt: number;
  updatedAt: number;
  deliveredAt: number | null;
  deadAt: number | null;
}

/** Callback counts as `RunInfo` shows them. */
export interface CallbackCounts {
  pending: number;
  delivered: number;
  deadLetters: number;
}

/** The public snapshot of a run. */
export interface RunInfo<Q = Json, S = Json> {
  runId: string;
  task: { name: string; version: string };
  status: RunStatus;
  reason: Reason;
  query: Q;
  state: S | null;
  page: number;
  batchId: string;
  attempt: number;
  businessFailures: number;
  scheduledRetries: number;
  recoveries: number;
  error: RunError | null;
  callbacks: CallbackCounts;
  revision: number;
  trigger: StoredTrigger | null;
  dueAt: string | null;
  limits: { deadlineAt: string | null; modelCalls: { limit: number | null; used: number } };
  /** Among due runs, higher is claimed first (-1000..1000). */
  priority: number;
  /** The flow-control group it was started in, or `null` (the default group). */
  group: string | null;
  /** How many times a hold of its group or task sent it back (`RATE_LIMITED`). */
  rateLimited: number;
  /** The run whose page started this one as a child, or `null`. */
  parentRunId: string | null;
  /** The child runs its pages started, and how many of them have settled (zeros when none). */
  children: { total: number; settled: number };
  createdAt: string;
  updatedAt: string;
}

/** Converts epoch milliseconds to an ISO-8601 UTC string. */
export function iso(ms: number): string {
  // Transitions decided together share their millisecond: format it once.
  if (ms !== lastIsoMs) {
    lastIsoMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
let lastIsoMs = Number.NaN;
let lastIso = '';
