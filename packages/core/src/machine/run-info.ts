// A stored run as the public `RunInfo` shows it: built from the fields a listing reads, with or without payloads.
import type { Json } from '../util/json.js';
import { type CallbackCounts, iso, type RunInfo, type RunRecord } from './run-types.js';

/** The fields of a stored run that its `RunInfo` shows, besides `query` and `state`. */
export type RunInfoFields = Pick<
  RunRecord,
  | 'runId'
  | 'taskName'
  | 'taskVersion'
  | 'status'
  | 'reason'
  | 'page'
  | 'pageFailures'
  | 'businessFailures'
  | 'scheduledRetries'
  | 'recoveries'
  | 'error'
  | 'revision'
  | 'trigger'
  | 'dueAt'
  | 'deadlineAt'
  | 'modelCallLimit'
  | 'modelCallsUsed'
  | 'priority'
  | 'group'
  | 'rateLimited'
  | 'parent'
  | 'children'
  | 'createdAt'
  | 'updatedAt'
>;

/** Builds the public `RunInfo` from a stored run and its callback counts. */
export function toRunInfo<Q = Json, S = Json>(
  run: RunInfoFields & Pick<RunRecord, 'query' | 'state'>,
  callbacks: CallbackCounts,
): RunInfo<Q, S> {
  const info = toRunInfoWithoutPayloads(run, callbacks) as RunInfo<Q, S>;
  info.query = run.query as Q;
  info.state = run.state as S | null;
  return info;
}

/** Builds a run's `RunInfo` without `query` and `state` (a listed run's, unless the listing asked for payloads). */
export function toRunInfoWithoutPayloads(
  run: RunInfoFields,
  callbacks: CallbackCounts,
): Omit<RunInfo, 'query' | 'state'> {
  return {
    runId: run.runId,
    task: { name: run.taskName, version: run.taskVersion },
    status: run.status,
    reason: run.reason,
    page: run.page,
    batchId: `${run.runId}:${run.page}`,
    attempt: run.pageFailures + 1,
    businessFailures: run.businessFailures,
    scheduledRetries: run.scheduledRetries,
    recoveries: run.recoveries,
    error: run.error,
    callbacks,
    revision: run.revision,
    trigger: run.trigger,
    dueAt: run.dueAt === null ? null : iso(run.dueAt),
    limits: {
      deadlineAt: run.deadlineAt === null ? null : iso(run.deadlineAt),
      modelCalls: { limit: run.modelCallLimit, used: run.modelCallsUsed },
    },
    priority: run.priority,
    group: run.group,
    rateLimited: run.rateLimited,
    parentRunId: run.parent?.runId ?? null,
    children: { total: run.children?.total ?? 0, settled: run.children?.settled ?? 0 },
    createdAt: iso(run.createdAt),
    updatedAt: iso(run.updatedAt),
  };
}
