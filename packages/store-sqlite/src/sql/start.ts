import type { CreateRunRequest, CreateRunResult } from '@docket/core/store';
import { historyParams, rowToRun, runParams } from '@docket/core/store';
import type { SqliteContext } from '../context.js';

/**
 * `Store.createRun`: the run and its first history entry, unless its idempotency key names a run already or the
 * namespace is at `maxRuns`. In the group's transaction, so the check and the insert are one atomic step.
 */
export function createRun(ctx: SqliteContext, request: CreateRunRequest): Promise<CreateRunResult> {
  const { run } = request;
  return ctx.write(
    'task.start',
    ({ s }): CreateRunResult => {
      if (run.idempotencyKey !== null) {
        const existing = s.selectRunByKey.get(run.namespace, run.taskName, run.idempotencyKey);
        if (existing) return { kind: 'existing', run: rowToRun(existing) };
      }
      if (request.maxRuns !== null && (s.countRuns.get(run.namespace)?.n ?? 0) >= request.maxRuns) {
        return { kind: 'capacity' };
      }
      s.insertRun.run(runParams(run));
      s.insertHistory.run(historyParams(run.runId, request.history));
      return { kind: 'created', run };
    },
    run.runId,
  );
}
