/** The run row both SQL stores use (snake_case columns, JSON as text, times as epoch ms), and its codec. */
import { type ClaimRank, claimDueAt } from '../machine/claimable.js';
import { DEFAULT_GROUP } from '../machine/flow.js';
import type { RunRecord } from '../machine/run-types.js';
import type { ChildRecord } from './read-requests.js';

/** A `docket_runs` row as better-sqlite3 returns it. */
export interface RunRow {
  run_id: string;
  namespace: string;
  task_name: string;
  task_version: string;
  definition_hash: string;
  status: string;
  reason: string;
  query: string;
  state: string | null;
  page: number;
  page_failures: number;
  business_failures: number;
  scheduled_retries: number;
  recoveries: number;
  error: string | null;
  revision: number;
  trigger: string | null;
  due_at: number | null;
  claim_due_at: number | null;
  deadline_at: number | null;
  model_call_limit: number | null;
  model_calls_used: number;
  idempotency_key: string | null;
  input_hash: string;
  policy: string;
  events: string;
  recovery: string;
  trigger_event: string | null;
  fence: number;
  lease_owner: string | null;
  lease_token: number | null;
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
  priority: number;
  retries: number;
  trace_parent: string | null;
  /** The run's group, `''` for the default group (`DEFAULT_GROUP`). */
  group_key: string;
  rate_limited: number;
  /** The parent run's id and page (`RunRecord.parent`), both NULL for a run that is no child. */
  parent_run_id: string | null;
  parent_page: number | null;
  /** `RunRecord.children` as JSON, or NULL. */
  children: string | null;
}

/** The lease stored in a row's three lease columns, or `null`. */
/** The lease a row's three lease columns describe, or `null`. */
export function leaseOf(row: {
  lease_owner: string | null;
  lease_token: number | null;
  lease_expires_at: number | null;
}) {
  return row.lease_owner === null || row.lease_token === null || row.lease_expires_at === null
    ? null
    : { owner: row.lease_owner, token: Number(row.lease_token), expiresAt: Number(row.lease_expires_at) };
}

/** A JSON column's text, `null` kept as SQL NULL. */
export const json = (value: unknown): string | null => (value === null ? null : JSON.stringify(value));
/** A JSON column's value, SQL NULL as `null`. */
export const parse = <T>(value: string | null): T | null => (value === null ? null : (JSON.parse(value) as T));

/** A stored row's place in the claim order (`CLAIMABLE.order`), for merging several tasks' candidates. */
export function claimRankOfRow(row: Pick<RunRow, 'priority' | 'claim_due_at' | 'created_at'>): ClaimRank {
  return {
    priority: Number(row.priority),
    claimDueAt: row.claim_due_at === null ? null : Number(row.claim_due_at),
    createdAt: Number(row.created_at),
  };
}

/**
 * Named parameters for inserting or updating a run row, in `RUN_COLUMNS` order (`Object.values` gives them by
 * position).
 */
export function runParams(run: RunRecord): RunRow {
  return {
    run_id: run.runId,
    namespace: run.namespace,
    task_name: run.taskName,
    task_version: run.taskVersion,
    definition_hash: run.definitionHash,
    status: run.status,
    reason: run.reason,
    query: JSON.stringify(run.query),
    state: json(run.state),
    page: run.page,
    page_failures: run.pageFailures,
    business_failures: run.businessFailures,
    scheduled_retries: run.scheduledRetries,
    recoveries: run.recoveries,
    error: json(run.error),
    revision: run.revision,
    trigger: json(run.trigger),
    due_at: run.dueAt,
    claim_due_at: claimDueAt(run),
    deadline_at: run.deadlineAt,
    model_call_limit: run.modelCallLimit,
    model_calls_used: run.modelCallsUsed,
    idempotency_key: run.idempotencyKey,
    input_hash: run.inputHash,
    policy: sharedJsonText(run.policy),
    events: sharedJsonText(run.events),
    recovery: run.recovery,
    trigger_event: json(run.triggerEvent),
    fence: run.fence,
    lease_owner: run.lease?.owner ?? null,
    lease_token: run.lease?.token ?? null,
    lease_expires_at: run.lease?.expiresAt ?? null,
    created_at: run.createdAt,
    updated_at: run.updatedAt,
    priority: run.priority,
    retries: run.retries,
    trace_parent: run.traceParent,
    group_key: run.group ?? DEFAULT_GROUP,
    rate_limited: run.rateLimited,
    parent_run_id: run.parent?.runId ?? null,
    parent_page: run.parent?.page ?? null,
    children: json(run.children),
  };
}

/** How a run column is read from a record and encoded (JSON columns as text; those are compared by identity). */
type RunField = readonly [column: keyof RunRow, read: (run: RunRecord) => unknown, encode: Encode | null];
type Encode = (value: unknown) => unknown;

/** A JSON column that may hold SQL NULL, and one that always holds text (a null query is the text `null`). */
const NULLABLE: Encode = (value) => json(value);
const TEXT: Encode = (value) => JSON.stringify(value);

const RUN_FIELDS: readonly RunField[] = [
  ['run_id', (r) => r.runId, null],
  ['namespace', (r) => r.namespace, null],
  ['task_name', (r) => r.taskName, null],
  ['task_version', (r) => r.taskVersion, null],
  ['definition_hash', (r) => r.definitionHash, null],
  ['status', (r) => r.status, null],
  ['reason', (r) => r.reason, null],
  ['query', (r) => r.query, TEXT],
  ['state', (r) => r.state, NULLABLE],
  ['page', (r) => r.page, null],
  ['page_failures', (r) => r.pageFailures, null],
  ['business_failures', (r) => r.businessFailures, null],
  ['scheduled_retries', (r) => r.scheduledRetries, null],
  ['recoveries', (r) => r.recoveries, null],
  ['error', (r) => r.error, NULLABLE],
  ['revision', (r) => r.revision, null],
  ['trigger', (r) => r.trigger, NULLABLE],
  ['due_at', (r) => r.dueAt, null],
  ['claim_due_at', (r) => claimDueAt(r), null],
  ['deadline_at', (r) => r.deadlineAt, null],
  ['model_call_limit', (r) => r.modelCallLimit, null],
  ['model_calls_used', (r) => r.modelCallsUsed, null],
  ['idempotency_key', (r) => r.idempotencyKey, null],
  ['input_hash', (r) => r.inputHash, null],
  ['policy', (r) => r.policy, TEXT],
  ['events', (r) => r.events, TEXT],
  ['recovery', (r) => r.recovery, null],
  ['trigger_event', (r) => r.triggerEvent, NULLABLE],
  ['fence', (r) => r.fence, null],
  ['lease_owner', (r) => r.lease?.owner ?? null, null],
  ['lease_token', (r) => r.lease?.token ?? null, null],
  ['lease_expires_at', (r) => r.lease?.expiresAt ?? null, null],
  ['created_at', (r) => r.createdAt, null],
  ['updated_at', (r) => r.updatedAt, null],
  ['priority', (r) => r.priority, null],
  ['retries', (r) => r.retries, null],
  ['trace_parent', (r) => r.traceParent, null],
  ['group_key', (r) => r.group ?? DEFAULT_GROUP, null],
  ['rate_limited', (r) => r.rateLimited, null],
  ['parent_run_id', (r) => r.parent?.runId ?? null, null],
  ['parent_page', (r) => r.parent?.page ?? null, null],
  ['children', (r) => r.children, NULLABLE],
];

/**
 * The columns a write changes, encoded as `runParams` would encode them. JSON columns count as changed when the
 * value is another object (transitions copy unchanged values by reference), so nothing unchanged is serialised:
 * a claim or a settle then costs a handful of scalar columns instead of the whole row. Written out field by field
 * (the same columns as `RUN_FIELDS`, in the same order): this runs for every write, and a loop over the field
 * table's closures cost ten times as much.
 */
export function runChanges(b: RunRecord, a: RunRecord): Partial<RunRow> {
  const c: Partial<RunRow> = {};
  if (a.runId !== b.runId) c.run_id = a.runId;
  if (a.namespace !== b.namespace) c.namespace = a.namespace;
  if (a.taskName !== b.taskName) c.task_name = a.taskName;
  if (a.taskVersion !== b.taskVersion) c.task_version = a.taskVersion;
  if (a.definitionHash !== b.definitionHash) c.definition_hash = a.definitionHash;
  if (a.status !== b.status) c.status = a.status;
  if (a.reason !== b.reason) c.reason = a.reason;
  if (a.query !== b.query) c.query = JSON.stringify(a.query);
  if (a.state !== b.state) c.state = json(a.state);
  if (a.page !== b.page) c.page = a.page;
  if (a.pageFailures !== b.pageFailures) c.page_failures = a.pageFailures;
  if (a.businessFailures !== b.businessFailures) c.business_failures = a.businessFailures;
  if (a.scheduledRetries !== b.scheduledRetries) c.scheduled_retries = a.scheduledRetries;
  if (a.recoveries !== b.recoveries) c.recoveries = a.recoveries;
  if (a.error !== b.error) c.error = json(a.error);
  if (a.revision !== b.revision) c.revision = a.revision;
  if (a.trigger !== b.trigger) c.trigger = json(a.trigger);
  if (a.dueAt !== b.dueAt) c.due_at = a.dueAt;
  const claimAt = claimDueAt(a);
  if (claimAt !== claimDueAt(b)) c.claim_due_at = claimAt;
  if (a.deadlineAt !== b.deadlineAt) c.deadline_at = a.deadlineAt;
  if (a.modelCallLimit !== b.modelCallLimit) c.model_call_limit = a.modelCallLimit;
  if (a.modelCallsUsed !== b.modelCallsUsed) c.model_calls_used = a.modelCallsUsed;
  if (a.idempotencyKey !== b.idempotencyKey) c.idempotency_key = a.idempotencyKey;
  if (a.inputHash !== b.inputHash) c.input_hash = a.inputHash;
  if (a.policy !== b.policy) c.policy = sharedJsonText(a.policy);
  if (a.events !== b.events) c.events = sharedJsonText(a.events);
  if (a.recovery !== b.recovery) c.recovery = a.recovery;
  if (a.triggerEvent !== b.triggerEvent) c.trigger_event = json(a.triggerEvent);
  if (a.fence !== b.fence) c.fence = a.fence;
  const after = a.lease;
  const before = b.lease;
  if (after !== before) {
    const owner = after?.owner ?? null;
    const token = after?.token ?? null;
    const expiresAt = after?.expiresAt ?? null;
    if (owner !== (before?.owner ?? null)) c.lease_owner = owner;
    if (token !== (before?.token ?? null)) c.lease_token = token;
    if (expiresAt !== (before?.expiresAt ?? null)) c.lease_expires_at = expiresAt;
  }
  if (a.createdAt !== b.createdAt) c.created_at = a.createdAt;
  if (a.updatedAt !== b.updatedAt) c.updated_at = a.updatedAt;
  if (a.priority !== b.priority) c.priority = a.priority;
  if (a.retries !== b.retries) c.retries = a.retries;
  if (a.traceParent !== b.traceParent) c.trace_parent = a.traceParent;
  if (a.group !== b.group) c.group_key = a.group ?? DEFAULT_GROUP;
  if (a.rateLimited !== b.rateLimited) c.rate_limited = a.rateLimited;
  if (a.parent !== b.parent) {
    c.parent_run_id = a.parent?.runId ?? null;
    c.parent_page = a.parent?.page ?? null;
  }
  if (a.children !== b.children) c.children = json(a.children);
  return c;
}

const FIELD_BY_COLUMN = new Map(RUN_FIELDS.map((field) => [field[0], field]));

/** One column of a run, encoded as `runParams` encodes it. */
export function runColumn(run: RunRecord, column: keyof RunRow): unknown {
  const field = FIELD_BY_COLUMN.get(column);
  if (field === undefined) throw new Error(`internal: no run column ${column}`);
  const value = field[1](run);
  return field[2] === null ? value : field[2](value);
}

const shared = new Map<string, unknown>();
const sharedText = new WeakMap<object, string>();

/**
 * The JSON text of a value many runs share by reference (a task's policy and callback kinds, from its definition or
 * from `parseSharedJson`, both deeply frozen), serialised once per object; an object that is not frozen is serialised
 * at each call.
 */
export function sharedJsonText(value: object): string {
  let text = sharedText.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    if (Object.isFrozen(value)) sharedText.set(value, text);
  }
  return text;
}

/**
 * Parses a JSON column that many runs share word for word (a task's policy and callback kinds): parsed once, frozen,
 * and shared, so reading a slice of runs does not parse the same text for every row.
 */
export function parseSharedJson<T>(text: string): T {
  let value = shared.get(text);
  if (value === undefined) {
    if (shared.size >= 1024) shared.clear();
    value = deepFreezeJson(JSON.parse(text));
    shared.set(text, value);
  }
  return value as T;
}

function deepFreezeJson<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreezeJson(inner);
    Object.freeze(value);
  }
  return value;
}

/** Rebuilds a `RunRecord` from its row. */
export function rowToRun(row: RunRow): RunRecord {
  return {
    runId: row.run_id,
    namespace: row.namespace,
    taskName: row.task_name,
    taskVersion: row.task_version,
    definitionHash: row.definition_hash,
    status: row.status as RunRecord['status'],
    reason: row.reason as RunRecord['reason'],
    query: JSON.parse(row.query),
    state: parse(row.state),
    page: row.page,
    pageFailures: row.page_failures,
    businessFailures: row.business_failures,
    scheduledRetries: row.scheduled_retries,
    recoveries: row.recoveries,
    error: parse(row.error),
    revision: row.revision,
    trigger: parse(row.trigger),
    dueAt: row.due_at,
    deadlineAt: row.deadline_at,
    modelCallLimit: row.model_call_limit,
    modelCallsUsed: row.model_calls_used,
    idempotencyKey: row.idempotency_key,
    inputHash: row.input_hash,
    policy: parseSharedJson(row.policy),
    events: parseSharedJson(row.events),
    recovery: row.recovery as RunRecord['recovery'],
    triggerEvent: parse(row.trigger_event),
    fence: row.fence,
    lease: leaseOf(row),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    priority: row.priority,
    retries: row.retries,
    traceParent: row.trace_parent ?? null,
    group: row.group_key === DEFAULT_GROUP ? null : row.group_key,
    rateLimited: row.rate_limited,
    parent:
      row.parent_run_id === null || row.parent_run_id === undefined
        ? null
        : { runId: row.parent_run_id, page: Number(row.parent_page) },
    children: parse(row.children ?? null),
  };
}

/** The columns a `ChildRecord` is read from (`rowToChild`). */
export const CHILD_COLUMNS = ['run_id', 'task_name', 'task_version', 'status', 'reason', 'state', 'error'] as const;

/** What `listChildren` reads of a child's row. */
export type ChildRow = Pick<RunRow, (typeof CHILD_COLUMNS)[number]>;

/** Rebuilds a `ChildRecord` (what `ctx.children` shows) from the child's row, as `rowToRun` would. */
export function rowToChild(row: ChildRow): ChildRecord {
  return {
    runId: row.run_id,
    taskName: row.task_name,
    taskVersion: row.task_version,
    status: row.status as RunRecord['status'],
    reason: row.reason as RunRecord['reason'],
    state: parse(row.state),
    error: parse(row.error),
  };
}
