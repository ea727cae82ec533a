import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/**
 * One row per run. JSON columns hold text; times are epoch milliseconds. The migration creates this table and
 * `docket_history` WITHOUT ROWID (drizzle-kit cannot say so; see drizzle/README.md): the primary key is then the
 * table itself, one B-tree fewer to write on every transition. `claim_due_at` repeats `due_at` only while
 * the run is claimable (pending, retrying, waiting for a time) and is NULL otherwise, so the claim is a range scan of
 * a partial index whose size is the number of claimable runs, whatever the number of finished ones.
 */
export const docketRuns = sqliteTable(
  'docket_runs',
  {
    runId: text('run_id').primaryKey(),
    namespace: text('namespace').notNull(),
    taskName: text('task_name').notNull(),
    taskVersion: text('task_version').notNull(),
    /**
     * This and `policy`, `events` and `recovery` hold `''` when the run has its task version's value, kept once in
     * `docket_definitions` (core's `TaskVersions`): about 150 bytes less in every row version of the run.
     */
    definitionHash: text('definition_hash').notNull(),
    status: text('status').notNull(),
    reason: text('reason').notNull(),
    query: text('query').notNull(),
    state: text('state'),
    page: integer('page').notNull(),
    pageFailures: integer('page_failures').notNull(),
    businessFailures: integer('business_failures').notNull(),
    scheduledRetries: integer('scheduled_retries').notNull(),
    recoveries: integer('recoveries').notNull(),
    error: text('error'),
    revision: integer('revision').notNull(),
    trigger: text('trigger'),
    dueAt: integer('due_at'),
    claimDueAt: integer('claim_due_at'),
    deadlineAt: integer('deadline_at'),
    modelCallLimit: integer('model_call_limit'),
    modelCallsUsed: integer('model_calls_used').notNull(),
    idempotencyKey: text('idempotency_key'),
    inputHash: text('input_hash').notNull(),
    policy: text('policy').notNull(),
    events: text('events').notNull(),
    recovery: text('recovery').notNull(),
    triggerEvent: text('trigger_event'),
    fence: integer('fence').notNull(),
    leaseOwner: text('lease_owner'),
    leaseToken: integer('lease_token'),
    leaseExpiresAt: integer('lease_expires_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    priority: integer('priority').notNull().default(0),
    retries: integer('retries').notNull().default(0),
    /** The W3C `traceparent` of the start that made the run, when a tracer gave one (`telemetry.tracer`). */
    traceParent: text('trace_parent'),
    /** The flow-control group (`start({ group })`), `''` for the default group. */
    groupKey: text('group_key').notNull().default(''),
    /** How many `RetryAfterError` holds of its group or task sent it back (`RATE_LIMITED`). */
    rateLimited: integer('rate_limited').notNull().default(0),
    /** The run whose page started this one as a child, and that page (`ctx.next(state, { children })`). */
    parentRunId: text('parent_run_id'),
    parentPage: integer('parent_page'),
    /** A parent's children counter as JSON (`RunRecord.children`), NULL until a page starts children. */
    children: text('children'),
    /**
     * 1 when the run is kept in `docket_runs_group_claim` while it is claimable: its task's claims may go group by
     * group (group limits, or a group hold ever set). Decided at insert from `docket_tasks`, and set on all the task's
     * runs that may become claimable again when the task starts going by group (`flow/by-group.ts`).
     */
    byGroup: integer('by_group').notNull().default(1),
  },
  (t) => [
    // A parent's children by page, in id order (`ctx.children`, `runs.list({ parentRunId })`, the cancel cascade).
    index('docket_runs_parent')
      .on(t.namespace, t.parentRunId, t.parentPage, t.runId)
      .where(sql`${t.parentRunId} IS NOT NULL`),
    index('docket_runs_claim_priority')
      .on(t.namespace, t.taskName, t.taskVersion, t.priority, t.claimDueAt)
      .where(sql`${t.claimDueAt} IS NOT NULL`),
    // The runs holding a lease, by task and group: flow control counts them there, lease recovery and the stats read
    // all of a namespace's (a lease's owner, token and expiry are set and cleared together).
    index('docket_runs_lease')
      .on(t.namespace, t.taskName, t.groupKey, t.leaseExpiresAt)
      .where(sql`${t.leaseExpiresAt} IS NOT NULL`),
    // Flow control: each group's claimable runs in claim order, for the tasks whose claims may go by group.
    index('docket_runs_group_claim')
      .on(t.namespace, t.taskName, t.groupKey, sql`${t.priority} DESC`, t.claimDueAt)
      .where(sql`${t.claimDueAt} IS NOT NULL AND ${t.byGroup} = 1`),
    uniqueIndex('docket_runs_idempotency')
      .on(t.namespace, t.taskName, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} IS NOT NULL`),
  ],
);

/** One row per transition, in `seq` order per run. */
export const docketHistory = sqliteTable(
  'docket_history',
  {
    runId: text('run_id').notNull(),
    seq: integer('seq').notNull(),
    at: text('at').notNull(),
    fromStatus: text('from_status'),
    toStatus: text('to_status').notNull(),
    reason: text('reason').notNull(),
    actor: text('actor').notNull(),
    detail: text('detail'),
  },
  (t) => [primaryKey({ columns: [t.runId, t.seq] })],
);

/**
 * The changes feed: one row per history entry, its rowid `position` given by the single writer in commit order: one
 * past the largest in the table, never reused because trimming never removes the newest row (`trimChanges`). One
 * B-tree and no index, so a commit writes one more page for the feed: reads take a window of positions and keep the
 * rows of their namespace and task.
 */
export const docketChanges = sqliteTable('docket_changes', {
  position: integer('position').primaryKey(),
  namespace: text('namespace').notNull(),
  taskName: text('task_name').notNull(),
  taskVersion: text('task_version').notNull(),
  runId: text('run_id').notNull(),
  seq: integer('seq').notNull(),
});

/**
 * Per namespace, the highest feed position retention removed (a cursor below it is `CURSOR_EXPIRED`), and where the
 * next trim looks from (`trim_from`: the entries before it are the namespace's trimmed ones or other namespaces').
 */
export const docketFeedFloors = sqliteTable('docket_feed_floors', {
  namespace: text('namespace').primaryKey(),
  floor: integer('floor').notNull(),
  trimFrom: integer('trim_from').notNull().default(0),
});

/** One row per callback event (`runId:page:kind`). */
export const docketEvents = sqliteTable(
  'docket_events',
  {
    eventId: text('event_id').primaryKey(),
    namespace: text('namespace').notNull(),
    runId: text('run_id').notNull(),
    taskName: text('task_name').notNull(),
    taskVersion: text('task_version').notNull(),
    kind: text('kind').notNull(),
    batchId: text('batch_id').notNull(),
    sequence: integer('sequence').notNull(),
    status: text('status').notNull(),
    deliveryAttempt: integer('delivery_attempt').notNull(),
    replayGeneration: integer('replay_generation').notNull(),
    revision: integer('revision').notNull(),
    dueAt: integer('due_at').notNull(),
    timestamp: text('timestamp').notNull(),
    query: text('query').notNull(),
    state: text('state'),
    error: text('error'),
    lastError: text('last_error'),
    leaseOwner: text('lease_owner'),
    leaseToken: integer('lease_token'),
    leaseExpiresAt: integer('lease_expires_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    deliveredAt: integer('delivered_at'),
    deadAt: integer('dead_at'),
  },
  (t) => [index('docket_events_run').on(t.runId), index('docket_events_due').on(t.namespace, t.status, t.dueAt)],
);

/** Registered task definitions and their hashes. */
export const docketDefinitions = sqliteTable(
  'docket_definitions',
  {
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    version: text('version').notNull(),
    hash: text('hash').notNull(),
    definition: text('definition').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.name, t.version] })],
);

/** Operator command receipts: a reused `commandId` returns the first result. */
export const docketCommands = sqliteTable(
  'docket_commands',
  {
    namespace: text('namespace').notNull(),
    commandId: text('command_id').notNull(),
    requestHash: text('request_hash').notNull(),
    result: text('result').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.namespace, t.commandId] }),
    index('docket_commands_created').on(t.namespace, t.createdAt),
  ],
);

/** One row per persisted schedule (`task.schedule`); `next_at` is indexed for the consumers that fire them. */
export const docketSchedules = sqliteTable(
  'docket_schedules',
  {
    namespace: text('namespace').notNull(),
    scheduleId: text('schedule_id').notNull(),
    taskName: text('task_name').notNull(),
    taskVersion: text('task_version').notNull(),
    cron: text('cron').notNull(),
    timezone: text('timezone').notNull(),
    query: text('query').notNull(),
    limits: text('limits').notNull(),
    misfire: text('misfire').notNull(),
    enabled: integer('enabled').notNull(),
    nextAt: integer('next_at'),
    lastSlotAt: integer('last_slot_at'),
    revision: integer('revision').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.namespace, t.scheduleId] }),
    index('docket_schedules_due').on(t.namespace, t.taskName, t.taskVersion, t.nextAt).where(sql`${t.enabled} = 1`),
  ],
);

/**
 * Runs counted by namespace, task and status, for `operator.stats()`, for the statuses of `COUNTED_STATUSES`
 * (parked and finished: waiting, blocked, paused, success, failed, cancelled); the store adds to them in the
 * transaction of each write that moves a run into or out of one (see `sql/run-counts.ts`), so a count reads this
 * small table whatever the number of finished runs. Pending, retrying, running and pausing runs are counted from the
 * claim and lease indexes. (Triggers would keep the counts too, but a row trigger on `docket_runs` makes SQLite build
 * the old row of every update: a fifth of the processing rate.)
 */
export const docketRunCounts = sqliteTable(
  'docket_run_counts',
  {
    namespace: text('namespace').notNull(),
    taskName: text('task_name').notNull(),
    taskVersion: text('task_version').notNull(),
    status: text('status').notNull(),
    n: integer('n').notNull(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.taskName, t.taskVersion, t.status] })],
);

/**
 * Runs settled (moved into success, failed or cancelled) per namespace and minute, for the dashboard's chart: the
 * store adds to the minute of each settle in its write's transaction (`sql/run-counts.ts`), and retention deletes
 * minutes older than the runs it collects.
 */
export const docketSettledMinutes = sqliteTable(
  'docket_settled_minutes',
  {
    namespace: text('namespace').notNull(),
    minute: integer('minute').notNull(),
    n: integer('n').notNull(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.minute] })],
);

/**
 * One row per task name and namespace, for flow control: the limits of its latest registration (JSON), whether an
 * operator paused it (`revision` rises with each applied pause or resume), and the `RetryAfterError` holds on it.
 */
export const docketTasks = sqliteTable(
  'docket_tasks',
  {
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    versions: text('versions').notNull(),
    flow: text('flow'),
    paused: integer('paused').notNull(),
    revision: integer('revision').notNull(),
    holdUntil: integer('hold_until'),
    groupHoldUntil: integer('group_hold_until'),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.name] })],
);

/** Flow control's groups of a task: when each was last claimed (fairness) and held (`hold: 'group'`). */
export const docketFlowGroups = sqliteTable(
  'docket_flow_groups',
  {
    namespace: text('namespace').notNull(),
    taskName: text('task_name').notNull(),
    groupKey: text('group_key').notNull(),
    lastClaimedAt: integer('last_claimed_at'),
    holdUntil: integer('hold_until'),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.taskName, t.groupKey] })],
);

/**
 * The claims a rate limit counts, kept only for the rate's window: `n` claims of one scope at one time (a claim's
 * runs share its time), `scope` being `task` (then `group_key` is `''`) or `group`. A claim reads one group's claims
 * by the primary key; `docket_flow_claims_at` orders a scope's claims by time, so a claim's prune deletes the old
 * ones as one range instead of reading every group's claims kept. Every row has `n > 0`: the index is partial on it so
 * that only a statement that says so (the prune) can read it, and a planner never takes it for a group's claims, which
 * it would have to filter by group.
 */
export const docketFlowClaims = sqliteTable(
  'docket_flow_claims',
  {
    namespace: text('namespace').notNull(),
    taskName: text('task_name').notNull(),
    scope: text('scope').notNull(),
    groupKey: text('group_key').notNull(),
    at: integer('at').notNull(),
    n: integer('n').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.namespace, t.taskName, t.scope, t.groupKey, t.at] }),
    index('docket_flow_claims_at').on(t.namespace, t.taskName, t.scope, t.at).where(sql`${t.n} > 0`),
  ],
);
