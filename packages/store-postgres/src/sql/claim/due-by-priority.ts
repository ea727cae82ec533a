/** Where a task's due runs are read from, and the SQL expressions (parameters) that select them. */
export interface DueQuery {
  /** The runs table, qualified. */
  runs: string;
  /** The columns to answer, as a select list. */
  columns: string;
  /** The name of the CTE that lists the task's priorities. */
  bands: string;
  namespace: string;
  taskName: string;
  taskVersion: string;
  now: string;
  limit: string;
  /**
   * A condition on the task the first band seek also requires (no band, no row, when it fails): the flow gate
   * (`flowGate`), so that a claim outside flow control never takes a run of a task under it.
   */
  gate?: string;
}

/**
 * The parameters of a one-task due read in the order both claims pass them (namespace, task, version, now, limit),
 * with the CTE of its priorities named `b`.
 */
export const TASK_DUE_PARAMS = {
  bands: 'b',
  namespace: '$1::text',
  taskName: '$2::text',
  taskVersion: '$3::text',
  now: '$4::double precision',
  limit: '$5::integer',
} as const;

/**
 * The flow gate in SQL: the task has no record that puts it under flow control at `now` (core's `needsFlow`: limits,
 * a pause, or a hold of the task or one of its groups in force). Runs of a task under it are claimed only by the flow
 * claim (`flow.ts`).
 */
export function flowGate(tasks: string, namespace: string, taskName: string, now: string): string {
  return `NOT EXISTS (SELECT 1 FROM ${tasks} AS ft WHERE ft.namespace = ${namespace} AND ft.name = ${taskName}
    AND (ft.flow IS NOT NULL OR ft.paused <> 0 OR ft.hold_until > ${now} OR ft.group_hold_until > ${now}))`;
}

/**
 * A task's due runs, highest priority first and earliest due within a priority, locked (`SKIP LOCKED`), as a
 * recursive CTE `bands` (the priorities the task has claimable runs of, highest first: one index seek each, a loose
 * index scan) and a select that reads each priority's due runs by one range scan of `docket_runs_claim_priority`,
 * stopping once `limit` rows are found. The cost follows the number of priorities in use, not the number of runs
 * waiting for a later time, which a scan ordered by (priority, due time) would step over. `WITH RECURSIVE` must open
 * the statement that uses it.
 */
export function dueByPriority(q: DueQuery): { bands: string; select: string } {
  const task = `namespace = ${q.namespace} AND task_name = ${q.taskName} AND task_version = ${q.taskVersion}`;
  const gate = q.gate === undefined ? '' : ` AND ${q.gate}`;
  const bands = `${q.bands}(p) AS (
      (SELECT priority FROM ${q.runs} WHERE ${task} AND claim_due_at IS NOT NULL${gate} ORDER BY priority DESC LIMIT 1)
      UNION ALL
      SELECT (SELECT priority FROM ${q.runs} WHERE ${task} AND claim_due_at IS NOT NULL AND priority < ${q.bands}.p
        ORDER BY priority DESC LIMIT 1) FROM ${q.bands} WHERE ${q.bands}.p IS NOT NULL)`;
  const select = `SELECT d.* FROM ${q.bands} CROSS JOIN LATERAL (SELECT ${q.columns} FROM ${q.runs}
        WHERE ${task} AND priority = ${q.bands}.p AND claim_due_at IS NOT NULL AND claim_due_at <= ${q.now}
        ORDER BY claim_due_at LIMIT ${q.limit} FOR UPDATE SKIP LOCKED) AS d
      WHERE ${q.bands}.p IS NOT NULL LIMIT ${q.limit}`;
  return { bands, select };
}

/** The earliest due time among a task's claimable runs, whatever their priority: one seek per priority in use. */
export function nextDueByPriority(q: Omit<DueQuery, 'columns' | 'now' | 'limit'>): string {
  const { bands } = dueByPriority({ ...q, columns: '', now: '', limit: '' });
  const task = `namespace = ${q.namespace} AND task_name = ${q.taskName} AND task_version = ${q.taskVersion}`;
  return `WITH RECURSIVE ${bands}
    SELECT min(d.due) AS due FROM ${q.bands} CROSS JOIN LATERAL (SELECT min(claim_due_at) AS due FROM ${q.runs}
      WHERE ${task} AND priority = ${q.bands}.p AND claim_due_at IS NOT NULL) AS d WHERE ${q.bands}.p IS NOT NULL`;
}
