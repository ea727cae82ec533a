import { type HistoryEntry, isTerminal, type RunInfo, type RunRecord, toRunInfo } from '../../machine/run-types.js';
import { transitionWrite } from '../../machine/run-write.js';
import { transition } from '../../machine/state-machine.js';
import type { RunWrite } from '../../store/contract.js';
import { DocketError } from '../../util/errors.js';
import { assertRunId } from '../../util/ids.js';
import type { WorkerLoop } from '../loops/worker.js';
import type { Engine, RegisteredTask } from '../queue/engine.js';
import { runNow } from './run-now.js';
import type { QueueGuards, RunOptions, TaskScope } from './task-scope.js';
import { type WaitOptions, waitForRun } from './wait.js';

export type { QueueGuards, RunOptions, WaitOptions };

import { removeSchedule, type ScheduleOptions, type ScheduleResult, upsertSchedule } from './schedules.js';
import type { StartInput } from './start-input.js';
import { type StartOptions, startManyRuns, startRun } from './start-runs.js';

export type { StartInput };

/** What `task.cancel` answers. */
export type CancelResult =
  | { found: false; runId: string }
  | { found: true; runId: string; status: RunRecord['status']; revision: number; changed: boolean };

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
  const { namespace, store } = engine;

  async function info(run: RunRecord): Promise<RunInfo<Q, S>> {
    return toRunInfo<Q, S>(run, await store.callbackCounts(namespace, run.runId));
  }

  async function load(runId: string, operation: string): Promise<RunRecord | null> {
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
  }

  async function start(input: StartInput<Q>, options?: StartOptions) {
    guards.assertUsable('task.start');
    if (guards.mode() === 'consumer') {
      throw new DocketError('MODE_OPERATION_NOT_ALLOWED', 'a consumer queue cannot start runs', {
        operation: 'task.start',
      });
    }
    return startRun(engine, def, input, options);
  }

  async function startMany(inputs: readonly StartInput<Q>[], options?: StartOptions) {
    guards.assertUsable('task.startMany');
    if (guards.mode() === 'consumer') {
      throw new DocketError('MODE_OPERATION_NOT_ALLOWED', 'a consumer queue cannot start runs', {
        operation: 'task.startMany',
      });
    }
    return startManyRuns(engine, def, inputs, options);
  }

  async function schedule(id: string, options: ScheduleOptions<Q>) {
    guards.assertUsable('task.schedule');
    return upsertSchedule(engine, def, id, options);
  }

  async function unschedule(id: string) {
    guards.assertUsable('task.unschedule');
    return removeSchedule(engine, def, id);
  }

  async function cancel(runId: string): Promise<CancelResult> {
    const operation = 'task.cancel';
    guards.assertUsable(operation);
    const existing = await load(runId, operation);
    if (!existing) return { found: false, runId };
    const result = await store.transact<{ run: RunRecord; write: RunWrite | null } | null>(
      namespace,
      runId,
      (_tx, current) => {
        if (current === null) return { write: null, value: null };
        if (isTerminal(current.status)) return { write: null, value: { run: current, write: null } };
        const decision = transitionCancel(current, engine.now());
        return { write: decision, value: { run: decision.run, write: decision } };
      },
      { pure: true },
    );
    if (result === null) return { found: false, runId };
    engine.written(result.write);
    if (result.write) engine.stopLocal(runId, 'cancelled');
    return {
      found: true,
      runId,
      status: result.run.status,
      revision: result.run.revision,
      changed: result.write !== null,
    };
  }

  const scope: TaskScope<Q, S> = { engine, registered, guards, workers, load, info };
  return {
    name: def.name,
    version: def.version,
    start,
    startMany,
    schedule,
    unschedule,
    async get(runId) {
      guards.assertUsable('task.get');
      const run = await load(runId, 'task.get');
      return run ? info(run) : null;
    },
    cancel,
    async history(runId) {
      guards.assertUsable('task.history');
      const run = await load(runId, 'task.history');
      return run ? store.getHistory(namespace, runId) : [];
    },
    run: (runId, options) => runNow(scope, runId, options),
    wait: (runId, options) => waitForRun(scope, runId, options),
  };
}

function transitionCancel(current: RunRecord, now: number) {
  const decision = transition(current, { type: 'cancel', actor: 'producer', reason: 'CANCELLED' }, now);
  if (!decision.ok) throw new Error(`internal: cancel refused: ${decision.message}`);
  return transitionWrite(decision);
}
