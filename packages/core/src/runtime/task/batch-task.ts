import type { HistoryEntry, RunInfo } from '../../machine/run-types.js';
import type { WorkerLoop } from '../loops/worker.js';
import type { Engine, RegisteredTask } from '../queue/engine.js';
import { type CancelResult, cancelRun } from './cancel.js';
import { rememberHandle } from './handles.js';
import { runNow } from './run-now.js';
import { assertCanStart, type QueueGuards, type RunOptions, taskScope } from './task-scope.js';
import { type WaitOptions, waitForRun } from './wait.js';

export type { CancelResult, QueueGuards, RunOptions, WaitOptions };

import { removeSchedule, type ScheduleOptions, type ScheduleResult, upsertSchedule } from './schedules.js';
import type { StartInput } from './start-input.js';
import { type StartOptions, startManyRuns, startRun } from './start-runs.js';

export type { StartInput };

/** The handle `queue.define` returns: start, read, cancel and run the runs of one task definition. */
export interface BatchTask<Q, S> {
  readonly name: string;
  readonly version: string;
  /** Starts a run, or returns the existing one for the same idempotency key and input. */
  start(input: StartInput<Q>, options?: StartOptions): Promise<{ runId: string; created: boolean }>;
  /**
   * Starts 1..1000 runs in one transaction, all or none, each input checked as `start` checks it (a bad one: its
   * error with `details.index`); the answers are in input order.
   */
  startMany(inputs: readonly StartInput<Q>[], options?: StartOptions): Promise<{ runId: string; created: boolean }[]>;
  /**
   * Creates or changes the persisted schedule `id` of this task: consumer queues start one run per slot of its cron
   * expression (`schedule:<id>:<slot>` is the run's idempotency key). A change takes effect from the next slot.
   */
  schedule(id: string, options: ScheduleOptions<Q>): Promise<ScheduleResult>;
  /** Removes this task's schedule `id`; runs it already made stay. */
  unschedule(id: string): Promise<{ found: boolean }>;
  /** Reads a run, `null` when there is none (or it was collected). */
  get(runId: string): Promise<RunInfo<Q, S> | null>;
  /** Cancels a live run; a terminal run is left as it is (`changed: false`). */
  cancel(runId: string): Promise<CancelResult>;
  /** The run's history in `seq` order; `[]` for a missing run. */
  history(runId: string): Promise<HistoryEntry[]>;
  /** Executes this run in this process now, waiting up to `waitMs` for it to be claimable; `null` for a missing run. */
  run(runId: string, options?: RunOptions): Promise<RunInfo<Q, S> | null>;
  /** Waits until the run is terminal or `timeoutMs` passes, and answers it as it is then; `null` for a missing run. */
  wait(runId: string, options?: WaitOptions): Promise<RunInfo<Q, S> | null>;
}

/** Builds the `BatchTask` of one registered definition. */
export function createBatchTask<Q, S>(
  engine: Engine,
  registered: RegisteredTask,
  guards: QueueGuards,
  workers: () => WorkerLoop | null,
): BatchTask<Q, S> {
  const def = registered.definition;
  const scope = taskScope<Q, S>(engine, registered, guards, workers);
  const { load, info } = scope;
  const handle: BatchTask<Q, S> = {
    name: def.name,
    version: def.version,
    async start(input, options) {
      assertCanStart(guards, 'task.start');
      return startRun(engine, def, input, options);
    },
    async startMany(inputs, options) {
      assertCanStart(guards, 'task.startMany');
      return startManyRuns(engine, def, inputs, options);
    },
    async schedule(id, options) {
      guards.assertUsable('task.schedule');
      return upsertSchedule(engine, def, id, options);
    },
    async unschedule(id) {
      guards.assertUsable('task.unschedule');
      return removeSchedule(engine, def, id);
    },
    async get(runId) {
      guards.assertUsable('task.get');
      const run = await load(runId, 'task.get');
      return run ? info(run) : null;
    },
    cancel: (runId) => cancelRun(scope, runId),
    async history(runId) {
      guards.assertUsable('task.history');
      const run = await load(runId, 'task.history');
      return run ? engine.store.getHistory(engine.namespace, runId) : [];
    },
    run: (runId, options) => runNow(scope, runId, options),
    wait: (runId, options) => waitForRun(scope, runId, options),
  };
  rememberHandle(handle, engine, registered);
  return handle;
}
