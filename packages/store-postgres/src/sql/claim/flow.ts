import {
  claimsByGroup,
  EMPTY_SCOPE,
  type FlowScopeState,
  flowPlanOf,
  type GroupTurn,
  holdsLeaseAfter,
  type RunRecord,
  type RunRow,
  recordFlowClaims,
  rowToRun,
  type SelectRequest,
  type TaskFlowState,
  windowStart,
} from '@docket/core/store';
import type { PgContext } from '../../context.js';
import type { Statement } from '../../wire/statement.js';
import { applyLockedWrites, type Executor, type PendingWrite, rowsOf, type Tables } from '../../writes/run-writes.js';
import { taskRecords } from '../../writes/task-rows.js';
import { dueByPriority, TASK_DUE_PARAMS } from './due-by-priority.js';
import { RUN_COLUMNS } from './plain-statement.js';

type ScopeRow = { leased: string | number; n: string | number; oldest: number | null };

function scopeOf(row: ScopeRow | undefined, holdUntil: number | null): FlowScopeState {
  if (row === undefined) return { ...EMPTY_SCOPE, holdUntil };
  return { leased: Number(row.leased), claimsInWindow: Number(row.n), oldestClaimAt: row.oldest, holdUntil };
}

/** The task's runs holding a lease and its claims after `after`. */
async function taskScope(tx: Executor, t: Tables, namespace: string, task: string, after: number) {
  const [row] = await rowsOf<ScopeRow>(tx, {
    text: `SELECT (SELECT count(*) FROM ${t.runs} WHERE namespace = $1 AND task_name = $2 AND lease_owner IS NOT NULL) AS leased,
        c.n, c.oldest FROM (SELECT coalesce(sum(n), 0) AS n, min(at) AS oldest FROM ${t.flowClaims}
        WHERE namespace = $1 AND task_name = $2 AND scope = 'task' AND group_key = '' AND at > $3) AS c`,
    params: [namespace, task, after],
  });
  return scopeOf(row, null);
}

/** Each group with claimable runs, when it was last claimed, and its scope. */
async function groupTurns(tx: Executor, t: Tables, namespace: string, task: string, after: number) {
  const rows = await rowsOf<
    ScopeRow & { group_key: string; last_claimed_at: number | null; hold_until: number | null }
  >(tx, {
    // The groups: one index seek each (a loose index scan of docket_runs_group_claim), not a scan of the due runs.
    text: `WITH RECURSIVE k(group_key) AS (
          (SELECT group_key FROM ${t.runs} WHERE namespace = $1 AND task_name = $2 AND claim_due_at IS NOT NULL
            ORDER BY group_key LIMIT 1)
          UNION ALL
          SELECT (SELECT r.group_key FROM ${t.runs} r WHERE r.namespace = $1 AND r.task_name = $2
            AND r.claim_due_at IS NOT NULL AND r.group_key > k.group_key ORDER BY r.group_key LIMIT 1)
          FROM k WHERE k.group_key IS NOT NULL)
        SELECT d.group_key, g.last_claimed_at, g.hold_until,
          (SELECT count(*) FROM ${t.runs} r WHERE r.namespace = $1 AND r.task_name = $2 AND r.group_key = d.group_key
            AND r.lease_owner IS NOT NULL) AS leased,
          (SELECT coalesce(sum(c.n), 0) FROM ${t.flowClaims} c WHERE c.namespace = $1 AND c.task_name = $2
            AND c.scope = 'group' AND c.group_key = d.group_key AND c.at > $3) AS n,
          (SELECT min(at) FROM ${t.flowClaims} c WHERE c.namespace = $1 AND c.task_name = $2 AND c.scope = 'group'
            AND c.group_key = d.group_key AND c.at > $3) AS oldest
        FROM k AS d
        LEFT JOIN ${t.flowGroups} g ON g.namespace = $1 AND g.task_name = $2 AND g.group_key = d.group_key
        WHERE d.group_key IS NOT NULL`,
    params: [namespace, task, after],
  });
  return rows.map(
    (row): GroupTurn => ({
      group: row.group_key,
      lastClaimedAt: row.last_claimed_at,
      scope: () => scopeOf(row, row.hold_until),
    }),
  );
}

/** Due runs of the versions, of one group or of any (`null`), in the claim order, locked (`SKIP LOCKED`). */
async function dueRuns(
  tx: Executor,
  t: Tables,
  request: SelectRequest,
  task: string,
  versions: readonly string[],
  group: string | null,
  limit: number,
): Promise<RunRow[]> {
  if (group !== null) {
    return rowsOf<RunRow>(tx, {
      text: `SELECT ${RUN_COLUMNS} FROM ${t.runs} WHERE namespace = $1 AND task_name = $2 AND group_key = $3
        AND task_version = ANY($4::text[]) AND claim_due_at IS NOT NULL AND claim_due_at <= $5
        ORDER BY priority DESC, claim_due_at, created_at LIMIT $6 FOR UPDATE SKIP LOCKED`,
      params: [request.namespace, task, group, versions, request.now, limit],
    });
  }
  const due = dueByPriority({
    runs: t.runs,
    columns: RUN_COLUMNS,
    ...TASK_DUE_PARAMS,
  });
  const rows: RunRow[] = [];
  for (const version of versions) {
    const text = `WITH RECURSIVE ${due.bands} ${due.select}`;
    rows.push(...(await rowsOf<RunRow>(tx, { text, params: [request.namespace, task, version, request.now, limit] })));
  }
  return rows;
}

/**
 * The flow claim of the request's flow-controlled tasks, in an open transaction: each task under an advisory lock
 * of its own (so that concurrent claims count each other's leases and claims), its record read again under it, core's
 * plan (`flowPlanOf`) from the leases, claims and groups, the due runs it allows locked and written, and the claims
 * its rates count recorded. Answers the runs written.
 */
export async function flowClaimIn(
  ctx: PgContext,
  tx: Executor,
  request: SelectRequest,
  tasks: ReadonlyMap<string, string[]>,
): Promise<RunRecord[]> {
  const t = ctx.tables;
  const written: RunRecord[] = [];
  for (const name of [...tasks.keys()].sort()) {
    const limit = request.limit - written.length;
    if (limit <= 0) break;
    await rowsOf(tx, {
      text: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))',
      params: [`${request.namespace}:flow:${name}`],
    });
    const record = (await taskRecords(tx, t, request.namespace, [name])).get(name);
    if (record === undefined) continue;
    const state: TaskFlowState = {
      flow: record.flow,
      paused: record.paused,
      holdUntil: record.holdUntil,
      groupHoldUntil: record.groupHoldUntil,
    };
    const claimed = await claimTask(tx, t, { ...request, limit }, name, tasks.get(name) ?? [], state);
    written.push(...claimed);
  }
  return written;
}

/** One task's flow claim (see `flowClaimIn`). */
async function claimTask(
  tx: Executor,
  t: Tables,
  request: SelectRequest,
  name: string,
  versions: readonly string[],
  state: TaskFlowState,
): Promise<RunRecord[]> {
  const { namespace, now } = request;
  const flow = state.flow;
  const task = state.paused ? EMPTY_SCOPE : await taskScope(tx, t, namespace, name, windowStart(now, flow?.rate));
  const byGroup = !state.paused && claimsByGroup(state, now);
  const groups = byGroup ? await groupTurns(tx, t, namespace, name, windowStart(now, flow?.group?.rate)) : [];
  const plan = flowPlanOf(
    state,
    () => task,
    () => groups,
    request,
  );
  if (plan.take === 0) return [];
  const rows: RunRow[] = [];
  if (plan.mode === 'all') rows.push(...(await dueRuns(tx, t, request, name, versions, null, plan.take)));
  for (const turn of plan.groups) {
    const left = plan.take - rows.length;
    if (left <= 0) break;
    rows.push(...(await dueRuns(tx, t, request, name, versions, turn.group, Math.min(turn.take, left))));
  }
  const writes: PendingWrite[] = [];
  for (const row of rows.slice(0, plan.take)) {
    const current = rowToRun(row);
    const write = request.plan(current);
    if (write !== null) writes.push({ current, write });
  }
  await applyLockedWrites(tx, t, writes);
  const runs = writes.map((w) => w.write.run);
  await recordClaims(tx, t, namespace, name, state, runs, now);
  return runs;
}

/** Records the claims the task's rates count and when its groups were last claimed (`recordFlowClaims`). */
async function recordClaims(
  tx: Executor,
  t: Tables,
  namespace: string,
  task: string,
  state: TaskFlowState,
  runs: readonly RunRecord[],
  now: number,
): Promise<void> {
  const statements: Statement[] = [];
  recordFlowClaims(
    {
      addClaims(taskName, group, at, count) {
        statements.push({
          text: `INSERT INTO ${t.flowClaims} AS c (namespace, task_name, scope, group_key, at, n) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (namespace, task_name, scope, group_key, at) DO UPDATE SET n = c.n + excluded.n`,
          params: [namespace, taskName, group === null ? 'task' : 'group', group ?? '', at, count],
        });
      },
      prune(taskName, groups, before) {
        statements.push({
          text: `DELETE FROM ${t.flowClaims} WHERE namespace = $1 AND task_name = $2 AND scope = $3 AND at <= $4`,
          params: [namespace, taskName, groups ? 'group' : 'task', before],
        });
      },
      touchGroups(taskName, groups, at) {
        statements.push({
          text: `INSERT INTO ${t.flowGroups} (namespace, task_name, group_key, last_claimed_at)
            SELECT $1, $2, unnest($3::text[]), $4 ON CONFLICT (namespace, task_name, group_key)
            DO UPDATE SET last_claimed_at = excluded.last_claimed_at`,
          params: [namespace, taskName, groups, at],
        });
      },
    },
    state,
    task,
    runs.filter(holdsLeaseAfter),
    now,
  );
  for (const statement of statements) await rowsOf(tx, statement);
}
