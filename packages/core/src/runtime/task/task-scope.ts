import type { RunInfo, RunRecord } from '../../machine/run-types.js';
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
