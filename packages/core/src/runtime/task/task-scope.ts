import { toRunInfo } from '../../machine/run-info.js';
import type { RunInfo, RunRecord } from '../../machine/run-types.js';
import { DocketError } from '../../util/errors.js';
import { assertRunId } from '../../util/ids.js';
import type { WorkerLoop } from '../loops/worker.js';
import type { Engine, RegisteredTask } from '../queue/engine.js';

/** Options of `task.run`. */
export interface RunOptions {
  signal?: AbortSignal;
  waitMs?: number;
}

/** Queue-level guards the task API calls before each operation. */
export interface QueueGuards {
  assertUsable(operation: string): void;
  mode(): 'all' | 'producer' | 'consumer';
}

/** What one task's operations share: the engine, the registered definition, the queue's guards and its readers. */
export interface TaskScope<Q, S> {
  engine: Engine;
  registered: RegisteredTask;
  guards: QueueGuards;
  workers: () => WorkerLoop | null;
  /** Reads a run of this task (`TASK_IDENTITY_MISMATCH` for another task's). */
  load(runId: string, operation: string): Promise<RunRecord | null>;
  /** The run's `RunInfo`, with its callback counts. */
  info(run: RunRecord): Promise<RunInfo<Q, S>>;
}

/** The scope of one task's operations: its run reader checks that a run belongs to this task. */
export function taskScope<Q, S>(
  engine: Engine,
  registered: RegisteredTask,
  guards: QueueGuards,
  workers: () => WorkerLoop | null,
): TaskScope<Q, S> {
  const def = registered.definition;
  const { namespace, store } = engine;
  return {
    engine,
    registered,
    guards,
    workers,
    async load(runId, operation) {
      assertRunId(runId, operation);
      const run = await store.getRun(namespace, runId);
      if (run && (run.taskName !== def.name || run.taskVersion !== def.version)) {
        throw new DocketError(
          'TASK_IDENTITY_MISMATCH',
          `run ${runId} belongs to ${run.taskName}@${run.taskVersion}, not ${def.name}@${def.version}`,
          { operation, runId },
        );
      }
      return run;
    },
    async info(run) {
      return toRunInfo<Q, S>(run, await store.callbackCounts(namespace, run.runId));
    },
  };
}

/** Refuses a start on a consumer queue (`MODE_OPERATION_NOT_ALLOWED`), after the queue's usability check. */
export function assertCanStart(guards: QueueGuards, operation: string): void {
  guards.assertUsable(operation);
  if (guards.mode() === 'consumer') {
    throw new DocketError('MODE_OPERATION_NOT_ALLOWED', 'a consumer queue cannot start runs', { operation });
  }
}
