import type { PlainClaim, RunRow, RunWrite, SelectRequest } from '@docket/core/store';
import { docketRuns } from '../../schema.js';
import { columnList } from '../../wire/recordsets.js';
import type { Statement } from '../../wire/statement.js';
import type { Tables } from '../../writes/run-writes.js';
import { dueByPriority, flowGate } from './due-by-priority.js';

/**
 * The run columns the prepared claim statements read, by name: a prepared statement that read `*` would fail once a
 * migration changed the table's column order ("cached plan must not change result type") in processes still running.
 */
export const RUN_COLUMNS = columnList(docketRuns);

/** Whether a claim's write is a plain claim: the run goes `running` and no callback event is written. */
export function isPlainClaim(write: RunWrite): boolean {
  return write.run.status === 'running' && write.events.length === 0;
}

/**
 * A row the plain-claim statement selected, as it was before the statement, in the statement's answer (see
 * `answerColumns`): a fresh run's few varying columns, or the whole row as JSON in `docket_row`; whether the statement
 * claimed it, and how many rows the statement claimed in all.
 */
export interface PlainClaimRow {
  run_id: string;
  query: string;
  input_hash: string;
  created_at: number;
  idempotency_key: string | null;
  deadline_at: number | null;
  model_call_limit: number | null;
  priority: number;
  trace_parent: string | null;
  group_key: string;
  /** Only when the request names several tasks. */
  task_name?: string;
  task_version?: string;
  /** The whole row as `row_to_json` wrote it, or NULL for a fresh run. */
  docket_row: string | null;
  docket_plain: boolean;
  docket_claimed: number;
}

/**
 * The text columns that every run of a task usually holds word for word: its definition hash, policy, callback kinds
 * and recovery mode. A fresh run whose four equal the values sent with the statement (the last ones claimed for the
 * request's first task) is answered without them (see `answerColumns`), and `freshRun` puts the sent values back:
 * the client then reads four short strings less per claimed row, and the rows' records share those strings.
 */
export interface SharedValues {
  definition_hash: string | null;
  policy: string | null;
  events: string | null;
  recovery: string | null;
}

/** The shared columns, in the order their values are sent. */
export const SHARED = ['definition_hash', 'policy', 'events', 'recovery'] as const;
const NOTHING_SHARED: SharedValues = Object.freeze({
  definition_hash: null,
  policy: null,
  events: null,
  recovery: null,
});

/** What one store last claimed for each task: the `SharedValues` its next claim sends. */
export class SharedColumns {
  private readonly byTask = new Map<string, SharedValues>();

  /** The values to send with a claim of `request` (nothing yet: every value comes back in full). */
  expected(request: SelectRequest): SharedValues {
    const first = request.tasks[0];
    return (first && this.byTask.get(taskKey(first.name, first.version))) ?? NOTHING_SHARED;
  }

  /** Remembers the values of a claimed row as stored, as the next claim of its task will expect them. */
  learn(row: Pick<RunRow, 'task_name' | 'task_version'> & SharedValues): void {
    const key = taskKey(row.task_name, row.task_version);
    const known = this.byTask.get(key);
    if (known && SHARED.every((column) => known[column] === row[column])) return;
    if (this.byTask.size >= 1_000) this.byTask.clear();
    this.byTask.set(key, {
      definition_hash: row.definition_hash,
      policy: row.policy,
      events: row.events,
      recovery: row.recovery,
    });
  }
}

const taskKey = (name: string, version: string) => `${name}\u0000${version}`;

/**
 * Where the plain claim's candidates come from: the request's tasks behind the flow gate (a worker's claim outside
 * flow control), the same without the gate (a flow claim that takes from the whole task, `take` at most), or the
 * due runs of a flow claim's groups in turn, each at most its `take` (the request's tasks are then the versions of
 * one task).
 */
export type ClaimSource =
  | { kind: 'gated' }
  | { kind: 'ungated' }
  | { kind: 'groups'; turns: readonly { group: string; take: number }[] };

const GATED: ClaimSource = { kind: 'gated' };

/** The statement text for each set of tables, number of tasks, hold and source: it depends on nothing else. */
const texts = new Map<string, string>();

/**
 * The plain claim as one statement, for requests that describe it (`SelectRequest.plainClaim`): it
 * selects and locks the due runs of the request's tasks (`SKIP LOCKED`, earliest `claim_due_at` first, at most
 * `limit`), writes core's plain claim to those that qualify for it (the same condition as `qualifiesForPlainClaim`)
 * with their history entries, and answers every selected row as it was before the statement, marked
 * `docket_plain` where it was claimed (`docket_claimed` counts the rows written, which must be as many). The rows it
 * selected but did not claim (a deadline passed, a time trigger fired) are left for core's plans on the ordinary path.
 * With `hold` it writes nothing: it selects and locks the same rows and answers them marked the same way, and the
 * caller writes the claims later in the same transaction (see `held-claims.ts`). `source` says where the candidates
 * come from (`ClaimSource`).
 */
export function plainClaimStatement(
  tables: Tables,
  request: SelectRequest,
  claim: PlainClaim,
  shared: SharedValues = NOTHING_SHARED,
  hold = false,
  source: ClaimSource = GATED,
): Statement {
  const tasks = request.tasks.length;
  const key = `${tables.runs}\n${tasks}\n${hold}\n${source.kind}`;
  // $1 namespace, $2 now, $3 limit, then (unless held) $4 actor, $5 lease expiry, $6 history time, then name and
  // version per task (for groups: the name, the versions, the groups and their takes), then the shared values
  // (`SharedValues`, in `SHARED` order).
  const firstTask = hold ? 4 : 7;
  const sharedAt = firstTask + (source.kind === 'groups' ? 4 : 2 * tasks);
  let text = texts.get(key);
  if (text === undefined) {
    const selected =
      source.kind === 'groups' ? groupsSelected(tables, firstTask) : tasksSelected(tables, tasks, firstTask, source);
    text = claimText(tables, selected, answerColumns(tasks, sharedAt), hold);
    texts.set(key, text);
  }
  const params: unknown[] = [request.namespace, request.now, request.limit];
  if (!hold) params.push(claim.actor, claim.leaseExpiresAt, claim.at);
  if (source.kind === 'groups') {
    const turns = source.turns;
    params.push(
      request.tasks[0]?.name,
      request.tasks.map((task) => task.version),
    );
    params.push(
      turns.map((turn) => turn.group),
      turns.map((turn) => turn.take),
    );
  } else for (const task of request.tasks) params.push(task.name, task.version);
  for (const column of SHARED) params.push(shared[column]);
  return { text, params };
}

/** The CTEs that end in `c`, the candidates of the request's tasks (see `plainClaimStatement`). */
function tasksSelected(tables: Tables, tasks: number, firstTask: number, source: ClaimSource): string {
  const perTask = Array.from({ length: tasks }, (_, i) =>
    dueByPriority({
      runs: tables.runs,
      columns: RUN_COLUMNS,
      bands: `b${i}`,
      namespace: '$1::text',
      taskName: `$${firstTask + 2 * i}::text`,
      taskVersion: `$${firstTask + 1 + 2 * i}::text`,
      now: '$2::double precision',
      limit: '$3::integer',
      ...(source.kind === 'gated'
        ? { gate: flowGate(tables.tasks, '$1::text', `$${firstTask + 2 * i}::text`, '$2::double precision') }
        : {}),
    }),
  );
  // One task's rows come straight from its index scans; several tasks' (one locking CTE each, since a locking
  // select cannot be a branch of a UNION) are merged, highest priority first, then earliest due.
  return tasks === 1
    ? `${perTask[0]?.bands}, c AS (${perTask[0]?.select})`
    : `${perTask.map((s, i) => `${s.bands}, c${i} AS (${s.select})`).join(', ')},
      c AS (SELECT * FROM (${perTask.map((_, i) => `SELECT * FROM c${i}`).join(' UNION ALL ')}) AS t
          ORDER BY priority DESC, claim_due_at LIMIT $3::integer)`;
}

/**
 * The CTE `c` of a flow claim by group (parameters: `$1` namespace, `$2` now, `$3` limit, from `$first` the task's
 * name, its versions, the groups and their takes): each group's due runs of the versions, highest priority first and
 * earliest due within it (a range of `docket_runs_group_claim`), at most its take, group after group in turn order.
 * The statement stops at the limit, so a group after the claim is full is not read and no row is locked that is not
 * answered.
 */
export function groupsSelected(tables: Tables, first: number): string {
  return `c AS (SELECT d.* FROM unnest($${first + 2}::text[], $${first + 3}::integer[]) WITH ORDINALITY AS g(group_key, take, turn)
        CROSS JOIN LATERAL (SELECT ${RUN_COLUMNS} FROM ${tables.runs} WHERE namespace = $1::text
          AND task_name = $${first}::text AND group_key = g.group_key AND claim_due_at IS NOT NULL
          AND claim_due_at <= $2::double precision AND task_version = ANY($${first + 1}::text[])
          ORDER BY priority DESC, claim_due_at LIMIT g.take FOR UPDATE SKIP LOCKED) AS d
        LIMIT $3::integer)`;
}

/** The plain claim's statement around the candidates `c` that `selected` ends in (see `plainClaimStatement`). */
function claimText(tables: Tables, selected: string, answer: string, hold: boolean): string {
  // Whether the plain claim applies to a selected row: the condition of `qualifiesForPlainClaim`.
  const plain = `(c.status = 'pending' OR (c.status = 'retrying' AND (c.due_at IS NULL OR c.due_at <= $2::double precision)))
          AND (c.deadline_at IS NULL OR c.deadline_at > $2::double precision)`;
  // No join between the CTEs: with a generic plan the server expects one row in each and would compare every pair.
  // The update answers what the history rows need; the answer marks the claimed rows by the same condition, and
  // counts the update's rows so that the caller can check the two agree.
  return hold
    ? `WITH RECURSIVE ${selected}
      SELECT ${answer}, ${plain} AS docket_plain, (SELECT count(*)::integer FROM c WHERE ${plain}) AS docket_claimed FROM c`
    : `WITH RECURSIVE ${selected},
      u AS (UPDATE ${tables.runs} AS r SET status = 'running', reason = 'CLAIMED', revision = c.revision + 1,
          due_at = NULL, claim_due_at = NULL, fence = c.fence + 1, lease_owner = $4::text, lease_token = c.fence + 1,
          lease_expires_at = $5::double precision, updated_at = $2::double precision
        FROM c WHERE r.run_id = c.run_id AND ${plain}
        RETURNING r.run_id, c.revision + 1 AS seq, c.status AS from_status),
      h AS (INSERT INTO ${tables.history} (run_id, seq, at, from_status, to_status, reason, actor, detail)
        SELECT run_id, seq, $6::text, from_status, 'running', 'CLAIMED', $4::text, NULL FROM u)
      SELECT ${answer}, ${plain} AS docket_plain,
        (SELECT count(*)::integer FROM u) AS docket_claimed FROM c`;
}

/**
 * The claim's answer columns. A run never claimed before (a fresh start: page 1, every counter 0, revision 1, fence 0,
 * `pending`, `STARTED`, due and last updated when it was created, no state, error, trigger or lease) of the request's
 * task, whose shared columns equal the values sent from `$first` on (`SharedValues`), varies from every other such
 * run only in the few columns answered by name: the rest of its row is known, and `freshRun` writes it back. Any
 * other row comes back whole, as JSON, in `docket_row`. Each field of an answer costs the client a step of its parser
 * even when NULL, so the fresh run's answer is ten fields instead of thirty-six: ~1 µs per row less (measured in
 * docs/benchmarks.md).
 */
function answerColumns(tasks: number, first: number): string {
  const fresh = [
    `c.status = 'pending'`,
    `c.reason = 'STARTED'`,
    'c.page = 1',
    'c.page_failures = 0',
    'c.business_failures = 0',
    'c.scheduled_retries = 0',
    'c.recoveries = 0',
    'c.model_calls_used = 0',
    'c.revision = 1',
    'c.fence = 0',
    'c.due_at = c.created_at',
    'c.updated_at = c.created_at',
    'c.state IS NULL',
    'c.error IS NULL',
    'c."trigger" IS NULL',
    'c.trigger_event IS NULL',
    'c.lease_owner IS NULL',
    'c.lease_token IS NULL',
    'c.lease_expires_at IS NULL',
    'c.retries = 0',
    'c.rate_limited = 0',
    // A child (or a parent) is answered whole: the compact answer has no room for its family columns.
    'c.parent_run_id IS NULL',
    'c.children IS NULL',
    ...SHARED.map((column, i) => `c."${column}" = $${first + i}::text`),
  ].join(' AND ');
  const task = tasks === 1 ? '' : 'c.task_name, c.task_version, ';
  return `c.run_id, c.query, c.input_hash, c.created_at, c.idempotency_key, c.deadline_at, c.model_call_limit, c.priority, c.trace_parent, c.group_key, ${task}
        CASE WHEN ${fresh} THEN NULL ELSE row_to_json(c)::text END AS docket_row`;
}
