import { sql } from 'drizzle-orm';
import { bigint, doublePrecision, index, integer, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core';

// Tables are declared without a schema: the migrations run with `search_path` set to the store's `schema` option,
// so one database can hold several Docket installations. Times are epoch milliseconds in double precision (exact
// to 2^53, read back as JavaScript numbers by every driver); JSON is kept as text, as the SQLite store does.
// Every text column that an index keys on is `COLLATE "C"` (compared byte by byte), set by migration 0003:
// drizzle's `text()` does not model a collation, so a new indexed text column needs the same in its migration
// (test/migrations.test.ts checks every index).

/**
 * One row per run; `claim_due_at` is set only while the run is claimable (see the SQLite store). The columns that
 * claims and settles change come last, and migration 0002 creates the table with `fillfactor = 50`: a new row
 * version on its old version's page is then logged as that short tail only (docs/postgres-store-internals.md, "The run row's layout"). Keep
 * new columns that change often at the end. `priority` and `retries` (migration 0004, appended by `ADD COLUMN`) follow
 * them: a settle or claim never changes them, and an unchanged suffix is left out of the log as the prefix is.
 */
export const docketRuns = pgTable(
  'docket_runs',
  {
    runId: text('run_id').primaryKey(),
    namespace: text('namespace').notNull(),
    taskName: text('task_name').notNull(),
    taskVersion: text('task_version').notNull(),
    /**
     * This and `policy`, `events` and `recovery` hold `''` when the run has its task version's value, kept once in
     * `docket_definitions` (`PgTaskVersions`): a row of ~200 bytes instead of ~360.
     */
    definitionHash: text('definition_hash').notNull(),
    query: text('query').notNull(),
    inputHash: text('input_hash').notNull(),
    idempotencyKey: text('idempotency_key'),
    createdAt: doublePrecision('created_at').notNull(),
    deadlineAt: doublePrecision('deadline_at'),
    modelCallLimit: integer('model_call_limit'),
    policy: text('policy').notNull(),
    events: text('events').notNull(),
    recovery: text('recovery').notNull(),
    trigger: text('trigger'),
    triggerEvent: text('trigger_event'),
    state: text('state'),
    error: text('error'),
    page: integer('page').notNull(),
    pageFailures: integer('page_failures').notNull(),
    businessFailures: integer('business_failures').notNull(),
    scheduledRetries: integer('scheduled_retries').notNull(),
    recoveries: integer('recoveries').notNull(),
    modelCallsUsed: integer('model_calls_used').notNull(),
    status: text('status').notNull(),
    reason: text('reason').notNull(),
    revision: integer('revision').notNull(),
    fence: integer('fence').notNull(),
    dueAt: doublePrecision('due_at'),
    claimDueAt: doublePrecision('claim_due_at'),
    leaseOwner: text('lease_owner'),
    leaseToken: integer('lease_token'),
    leaseExpiresAt: doublePrecision('lease_expires_at'),
    updatedAt: doublePrecision('updated_at').notNull(),
    priority: integer('priority').notNull().default(0),
    retries: integer('retries').notNull().default(0),
    /** The W3C `traceparent` of the start that made the run, when a tracer gave one (migration 0006; never changes). */
    traceParent: text('trace_parent'),
    /** The flow-control group (`start({ group })`), `''` for the default group (migration 0008; never changes). */
    groupKey: text('group_key').notNull().default(''),
    /** How many `RetryAfterError` holds of its group or task sent it back (`RATE_LIMITED`). */
    rateLimited: integer('rate_limited').notNull().default(0),
    /** The run whose page started this one as a child, and that page (migration 0009; never change). */
    parentRunId: text('parent_run_id'),
    parentPage: integer('parent_page'),
    /** A parent's children counter as JSON (`RunRecord.children`), NULL until a page starts children. */
    children: text('children'),
  },
  (t) => [
    // A parent's children by page, in id order (`ctx.children`, `runs.list({ parentRunId })`, the cancel cascade).
    index('docket_runs_parent')
      .on(t.namespace, t.parentRunId, t.parentPage, t.runId)
      .where(sql`${t.parentRunId} IS NOT NULL`),
    index('docket_runs_claim_priority')
      .on(t.namespace, t.taskName, t.taskVersion, t.priority, t.claimDueAt)
      .where(sql`${t.claimDueAt} IS NOT NULL`),
    // The runs holding a lease, by task and group: flow control counts them there, lease recovery reads all of a
    // namespace's (a lease's owner, token and expiry are set and cleared together; migration 0014).
    index('docket_runs_lease')
      .on(t.namespace, t.taskName, t.groupKey, t.leaseExpiresAt)
      .where(sql`${t.leaseExpiresAt} IS NOT NULL`),
    // Flow control: each group's claimable runs in claim order.
    index('docket_runs_group_claim')
      .on(t.namespace, t.taskName, t.groupKey, sql`${t.priority} DESC`, t.claimDueAt)
      .where(sql`${t.claimDueAt} IS NOT NULL`),
    uniqueIndex('docket_runs_idempotency')
      .on(t.namespace, t.taskName, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} IS NOT NULL`),
  ],
);

/** One row per transition. */
export const docketHistory = pgTable(
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
 * The changes feed: one row per history entry, written by the trigger on `docket_history` (migration 0010) with its
 * staging `id`, its run and seq, and no `position` or task. `docket_sequence_changes()` gives positions later, in commit order (see
 * docs/postgres-store-internals.md, "The changes feed"); reads are ranges of the partial index on positions.
 */
export const docketChanges = pgTable(
  'docket_changes',
  {
    id: bigint('id', { mode: 'number' }).generatedAlwaysAsIdentity().notNull(),
    position: bigint('position', { mode: 'number' }),
    /** Set with the position, from the run (`NULL` while staged). */
    namespace: text('namespace'),
    taskName: text('task_name'),
    taskVersion: text('task_version'),
    runId: text('run_id').notNull(),
    seq: integer('seq').notNull(),
  },
  (t) => [
    index('docket_changes_unsequenced').on(t.id).where(sql`${t.position} IS NULL`),
    index('docket_changes_feed').on(t.namespace, t.position).where(sql`${t.position} IS NOT NULL`),
    index('docket_changes_task').on(t.namespace, t.taskName, t.position).where(sql`${t.position} IS NOT NULL`),
  ],
);

/**
 * The feed's one head row: the last position given (sequencers take turns on its row lock), and the floor of every
 * namespace once retention removed staged rows nobody numbered (their positions would have come after it).
 */
export const docketFeed = pgTable('docket_feed', {
  id: integer('id').primaryKey(),
  head: bigint('head', { mode: 'number' }).notNull(),
  floor: bigint('floor', { mode: 'number' }).default(0).notNull(),
});

/** Per namespace, the highest feed position retention removed: a cursor below it is `CURSOR_EXPIRED`. */
export const docketFeedFloors = pgTable('docket_feed_floors', {
  namespace: text('namespace').primaryKey(),
  floor: bigint('floor', { mode: 'number' }).notNull(),
});

/** One row per callback event. */
export const docketEvents = pgTable(
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
    dueAt: doublePrecision('due_at').notNull(),
    timestamp: text('timestamp').notNull(),
    query: text('query').notNull(),
    state: text('state'),
    error: text('error'),
    lastError: text('last_error'),
    leaseOwner: text('lease_owner'),
    leaseToken: integer('lease_token'),
    leaseExpiresAt: doublePrecision('lease_expires_at'),
    createdAt: doublePrecision('created_at').notNull(),
    updatedAt: doublePrecision('updated_at').notNull(),
    deliveredAt: doublePrecision('delivered_at'),
    deadAt: doublePrecision('dead_at'),
  },
  (t) => [
    index('docket_events_run').on(t.runId),
    index('docket_events_due').on(t.namespace, t.status, t.dueAt),
    index('docket_events_list').on(t.namespace, t.status, t.eventId),
  ],
);

/** Registered definitions. */
export const docketDefinitions = pgTable(
  'docket_definitions',
  {
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    version: text('version').notNull(),
    hash: text('hash').notNull(),
    definition: text('definition').notNull(),
    createdAt: doublePrecision('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.name, t.version] })],
);

/** Operator command receipts. */
export const docketCommands = pgTable(
  'docket_commands',
  {
    namespace: text('namespace').notNull(),
    commandId: text('command_id').notNull(),
    requestHash: text('request_hash').notNull(),
    result: text('result').notNull(),
    createdAt: doublePrecision('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.namespace, t.commandId] }),
    index('docket_commands_created').on(t.namespace, t.createdAt),
  ],
);

/** One row per persisted schedule (`task.schedule`); its key columns are `COLLATE "C"` (migration 0005). */
export const docketSchedules = pgTable(
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
    nextAt: doublePrecision('next_at'),
    lastSlotAt: doublePrecision('last_slot_at'),
    revision: integer('revision').notNull(),
    createdAt: doublePrecision('created_at').notNull(),
    updatedAt: doublePrecision('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.namespace, t.scheduleId] }),
    index('docket_schedules_due').on(t.namespace, t.taskName, t.taskVersion, t.nextAt).where(sql`${t.enabled} = 1`),
  ],
);

/**
 * Runs counted by namespace, task and status, for `operator.stats()`: kept by statement triggers on `docket_runs`
 * (migration 0006) in the transaction of each write. Each backend adds to its own `shard` (its process id modulo 16),
 * so concurrent workers do not wait on one counter row; a count is the sum over the shards.
 */
export const docketRunCounts = pgTable(
  'docket_run_counts',
  {
    namespace: text('namespace').notNull(),
    taskName: text('task_name').notNull(),
    taskVersion: text('task_version').notNull(),
    status: text('status').notNull(),
    shard: integer('shard').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.taskName, t.taskVersion, t.status, t.shard] })],
);

/**
 * Runs settled (moved into success, failed or cancelled) per namespace and minute, for the dashboard's chart: kept by
 * the update trigger of `docket_runs` (migration 0007) in each backend's own `shard`, like `docket_run_counts`.
 */
export const docketSettledMinutes = pgTable(
  'docket_settled_minutes',
  {
    namespace: text('namespace').notNull(),
    minute: doublePrecision('minute').notNull(),
    shard: integer('shard').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.minute, t.shard] })],
);

/**
 * Values one installation shares among its processes, by key. Docket reads none of them: the table stays because
 * dropping it would take a migration of its own, and rows that an older version wrote there are ignored.
 */
export const docketSettings = pgTable('docket_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});

/**
 * One row per task name and namespace, for flow control: the limits of its latest registration (JSON), whether an
 * operator paused it (`revision` rises with each applied pause or resume), and the `RetryAfterError` holds on it.
 */
export const docketTasks = pgTable(
  'docket_tasks',
  {
    namespace: text('namespace').notNull(),
    name: text('name').notNull(),
    versions: text('versions').notNull(),
    flow: text('flow'),
    paused: integer('paused').notNull(),
    revision: integer('revision').notNull(),
    holdUntil: doublePrecision('hold_until'),
    groupHoldUntil: doublePrecision('group_hold_until'),
    updatedAt: doublePrecision('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.namespace, t.name] })],
);

/** Flow control's groups of a task: when each was last claimed (fairness) and held (`hold: 'group'`). */
export const docketFlowGroups = pgTable(
  'docket_flow_groups',
  {
    namespace: text('namespace').notNull(),
    taskName: text('task_name').notNull(),
    groupKey: text('group_key').notNull(),
    lastClaimedAt: doublePrecision('last_claimed_at'),
    holdUntil: doublePrecision('hold_until'),
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
export const docketFlowClaims = pgTable(
  'docket_flow_claims',
  {
    namespace: text('namespace').notNull(),
    taskName: text('task_name').notNull(),
    scope: text('scope').notNull(),
    groupKey: text('group_key').notNull(),
    at: doublePrecision('at').notNull(),
    n: integer('n').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.namespace, t.taskName, t.scope, t.groupKey, t.at] }),
    index('docket_flow_claims_at').on(t.namespace, t.taskName, t.scope, t.at).where(sql`${t.n} > 0`),
  ],
);
