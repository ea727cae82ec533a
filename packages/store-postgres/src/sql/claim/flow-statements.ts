import {
  claimRankOfRow,
  claimsByGroup,
  compareClaimOrder,
  EMPTY_SCOPE,
  type FlowClaimPlan,
  type FlowScopeState,
  type GroupTurn,
  holdsLeaseAfter,
  type ListedGroup,
  type RunRecord,
  type RunRow,
  recordFlowClaims,
  type SelectRequest,
  type TaskFlowState,
  windowStart,
} from '@docket/core/store';
import type { Statement } from '../../wire/statement.js';
import type { Tables } from '../../writes/run-writes.js';
import { dueByPriority, TASK_DUE_PARAMS } from './due-by-priority.js';
import { groupsSelected, RUN_COLUMNS } from './plain-statement.js';

/** What a flow claim of one task reads under its lock besides the record: its scopes, and the windows' starts. */
export interface FlowReads {
  /** Whether the task's own scope is read: only a task limit counts its leases or claims. */
  task: boolean;
  groups: boolean;
  taskAfter: number;
  groupAfter: number;
}

/** The reads a claim at `now` needs for a task in `state` (none known: no groups, no rate). */
export function flowReadsOf(state: TaskFlowState | null, now: number): FlowReads {
  const flow = state?.flow ?? undefined;
  return {
    task: flow?.concurrency !== undefined || flow?.rate !== undefined,
    groups: state !== null && !state.paused && claimsByGroup(state, now),
    taskAfter: windowStart(now, flow?.rate),
    groupAfter: windowStart(now, flow?.group?.rate),
  };
}

/** Whether reads made for `made` answer what `needed` asks. */
export const readsCover = (made: FlowReads, needed: FlowReads): boolean =>
  (!needed.task || (made.task && made.taskAfter === needed.taskAfter)) &&
  (!needed.groups || (made.groups && made.groupAfter === needed.groupAfter));

type ScopeRow = { leased: string | number; n: string | number; oldest: number | null };

/** The task's runs holding a lease and its claims after `after`. */
export function taskScopeStatement(t: Tables, namespace: string, task: string, after: number): Statement {
  return {
    text: `SELECT (SELECT count(*) FROM ${t.runs} WHERE namespace = $1 AND task_name = $2 AND lease_expires_at IS NOT NULL) AS leased,
        c.n, c.oldest FROM (SELECT coalesce(sum(n), 0) AS n, min(at) AS oldest FROM ${t.flowClaims}
        WHERE namespace = $1 AND task_name = $2 AND scope = 'task' AND group_key = '' AND at > $3) AS c`,
    params: [namespace, task, after],
  };
}

/** The task's scope from the rows of `taskScopeStatement`. */
export function taskScopeOf(rows: readonly unknown[]): FlowScopeState {
  const row = rows[0] as ScopeRow | undefined;
  if (row === undefined) return EMPTY_SCOPE;
  return { leased: Number(row.leased), claimsInWindow: Number(row.n), oldestClaimAt: row.oldest, holdUntil: null };
}

/**
 * The task's groups with claimable runs, one index seek each (a loose index scan of `docket_runs_group_claim`), not a
 * scan of the due runs, each with its head run (one more seek): the listing that `GroupLists` keeps.
 */
export function groupListStatement(t: Tables, namespace: string, task: string): Statement {
  return {
    text: `WITH RECURSIVE k(group_key) AS (
          (SELECT group_key FROM ${t.runs} WHERE namespace = $1 AND task_name = $2 AND claim_due_at IS NOT NULL
            ORDER BY group_key LIMIT 1)
          UNION ALL
          SELECT (SELECT r.group_key FROM ${t.runs} r WHERE r.namespace = $1 AND r.task_name = $2
            AND r.claim_due_at IS NOT NULL AND r.group_key > k.group_key ORDER BY r.group_key LIMIT 1)
          FROM k WHERE k.group_key IS NOT NULL)
        SELECT group_key, NULL::double precision AS last_claimed_at,
          (SELECT r.run_id FROM ${t.runs} r WHERE r.namespace = $1 AND r.task_name = $2 AND r.group_key = k.group_key
            AND r.claim_due_at IS NOT NULL ORDER BY r.priority DESC, r.claim_due_at LIMIT 1) AS head_run_id
        FROM k WHERE group_key IS NOT NULL`,
    params: [namespace, task],
  };
}

/**
 * The statements that read the turns of the task's groups `keys`: each group's last claim and hold, the task's leases
 * by group and its claims by group after `after`, each in one pass (`groupTurnsOf` puts them together: joined by the
 * server under a generic plan, which expects a row or two on each side, they were compared pair by pair).
 */
export function groupTurnStatements(
  t: Tables,
  namespace: string,
  task: string,
  after: number,
  keys: readonly string[],
): Statement[] {
  return [
    {
      text: `SELECT group_key, last_claimed_at, hold_until FROM ${t.flowGroups}
        WHERE namespace = $1 AND task_name = $2 AND group_key = ANY($3::text[])`,
      params: [namespace, task, keys],
    },
    {
      text: `SELECT group_key, count(*) AS n FROM ${t.runs} WHERE namespace = $1 AND task_name = $2
        AND lease_expires_at IS NOT NULL GROUP BY group_key`,
      params: [namespace, task],
    },
    {
      // Group by group: each group's claims after `after` are one range of the key, so the claims kept past the
      // window (`recordFlowClaims`) and the groups not listed are never read.
      text: `SELECT k.group_key, c.n, c.oldest FROM unnest($4::text[]) AS k(group_key)
        CROSS JOIN LATERAL (SELECT sum(n) AS n, min(at) AS oldest FROM ${t.flowClaims} WHERE namespace = $1
          AND task_name = $2 AND scope = 'group' AND group_key = k.group_key AND at > $3) AS c
        WHERE c.n IS NOT NULL`,
      params: [namespace, task, after, keys],
    },
  ];
}

type GroupRow = { group_key: string; last_claimed_at: number | null; hold_until: number | null };
type CountRow = { group_key: string; n: string | number; oldest?: number | null };

/** The turns of the `listed` groups from the rows of `groupTurnStatements`, in their order. */
export function groupTurnsOf(listed: readonly ListedGroup[], rows: readonly unknown[][]): GroupTurn[] {
  const byKey = <R extends { group_key: string }>(list: unknown[] | undefined) =>
    new Map(((list ?? []) as R[]).map((row) => [row.group_key, row]));
  const groups = byKey<GroupRow>(rows[0]);
  const leased = byKey<CountRow>(rows[1]);
  const claims = byKey<CountRow>(rows[2]);
  return listed.map(({ group_key: group, head_run_id }) => {
    const row = groups.get(group);
    const claimed = claims.get(group);
    return {
      group,
      lastClaimedAt: row?.last_claimed_at ?? null,
      head: head_run_id ?? null,
      scope: () => ({
        leased: Number(leased.get(group)?.n ?? 0),
        claimsInWindow: Number(claimed?.n ?? 0),
        oldestClaimAt: claimed?.oldest ?? null,
        holdUntil: row?.hold_until ?? null,
      }),
    };
  });
}

/**
 * The statements that read (and lock, `SKIP LOCKED`) the due runs a plan takes, in the claim order: one per version
 * when it takes from the whole task, else one for all its groups (`groupsSelected`), for the claim made statement
 * after statement.
 */
export function dueStatements(
  t: Tables,
  request: SelectRequest,
  task: string,
  versions: readonly string[],
  plan: FlowClaimPlan,
): Statement[] {
  if (plan.take === 0) return [];
  if (plan.mode === 'all') {
    const due = dueByPriority({ runs: t.runs, columns: RUN_COLUMNS, ...TASK_DUE_PARAMS });
    const text = `WITH RECURSIVE ${due.bands} ${due.select}`;
    return versions.map((version) => ({ text, params: [request.namespace, task, version, request.now, plan.take] }));
  }
  if (plan.groups.length === 0) return [];
  const groups = plan.groups.map((turn) => turn.group);
  const takes = plan.groups.map((turn) => turn.take);
  return [
    {
      text: `WITH ${groupsSelected(t, 4)} SELECT * FROM c`,
      params: [request.namespace, request.now, plan.take, task, versions, groups, takes],
    },
  ];
}

/**
 * The statements that record what a flow claim of one task took (`recordFlowClaims`): the claims of all its groups
 * in one statement, not one per group.
 */
export function recordStatements(
  t: Tables,
  namespace: string,
  task: string,
  state: TaskFlowState,
  runs: readonly RunRecord[],
  now: number,
): Statement[] {
  const statements: Statement[] = [];
  const claims = { scopes: [] as string[], groups: [] as string[], at: [] as number[], counts: [] as number[] };
  const recorder = {
    addClaims(_task: string, group: string | null, at: number, count: number) {
      claims.scopes.push(group === null ? 'task' : 'group');
      claims.groups.push(group ?? '');
      claims.at.push(at);
      claims.counts.push(count);
    },
    prune(_task: string, groups: boolean, before: number) {
      // `n > 0` (every row) lets the prune read the partial time index `docket_flow_claims_at` (`schema.ts`).
      statements.push({
        text: `DELETE FROM ${t.flowClaims} WHERE namespace = $1 AND task_name = $2 AND scope = $3 AND at <= $4 AND n > 0`,
        params: [namespace, task, groups ? 'group' : 'task', before],
      });
    },
    touchGroups(_task: string, groups: readonly string[], at: number) {
      statements.push({
        text: `INSERT INTO ${t.flowGroups} (namespace, task_name, group_key, last_claimed_at)
          SELECT $1, $2, unnest($3::text[]), $4 ON CONFLICT (namespace, task_name, group_key)
          DO UPDATE SET last_claimed_at = excluded.last_claimed_at`,
        params: [namespace, task, groups, at],
      });
    },
  };
  recordFlowClaims(recorder, state, task, runs.filter(holdsLeaseAfter), now);
  if (claims.scopes.length > 0) {
    statements.push({
      text: `INSERT INTO ${t.flowClaims} AS c (namespace, task_name, scope, group_key, at, n)
          SELECT $1, $2, s, g, a, n FROM unnest($3::text[], $4::text[], $5::double precision[], $6::integer[]) AS x(s, g, a, n)
          ON CONFLICT (namespace, task_name, scope, group_key, at) DO UPDATE SET n = c.n + excluded.n`,
      params: [namespace, task, claims.scopes, claims.groups, claims.at, claims.counts],
    });
  }
  return statements;
}

/** The rows a plan takes, of those its statements read: in the claim order, at most its `take`. */
export function takenRows(plan: FlowClaimPlan, read: readonly RunRow[][]): RunRow[] {
  const rows = read.flat();
  // Several versions' rows come one version after another: highest priority first, then earliest due, across them.
  if (read.length > 1) rows.sort((a, b) => compareClaimOrder(claimRankOfRow(a), claimRankOfRow(b)));
  return rows.slice(0, plan.take);
}
