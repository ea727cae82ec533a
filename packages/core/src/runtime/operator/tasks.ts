import type { TaskFlow } from '../../machine/flow.js';
import type { TaskRecord } from '../../store/contract.js';
import { DocketError } from '../../util/errors.js';
import { hash, type OperatorScope, parse, taskCommandSchema } from './input.js';
import { operatorStats, type StatusCounts } from './stats.js';

/** One task as `tasks.list` shows it: its versions, whether it is paused, its command revision, limits and counts. */
export interface TaskInfo {
  name: string;
  versions: string[];
  paused: boolean;
  revision: number;
  flow: TaskFlow | null;
  /** Runs of every version, by status. */
  byStatus: StatusCounts;
}

/** What `tasks.pause|resume` answer. */
export type TaskCommandResult =
  | { kind: 'not_found'; task: string }
  | { kind: 'applied' | 'noop'; task: string; revision: number; paused: boolean; changed: boolean };

/** An operator command on one task (by name: every version). */
export interface TaskCommand {
  task: string;
  expectedRevision: number;
  reason: string;
  commandId: string;
}

/** `operator.tasks`: every task of the namespace; pausing one stops every process from claiming its runs. */
export interface OperatorTasks {
  /** The namespace's tasks by name, with their versions, pause state, revision, flow limits and run counts. */
  list(): Promise<TaskInfo[]>;
  /** Stops every process from claiming the task's runs; pages running finish, starts and events are still accepted. */
  pause(command: TaskCommand): Promise<TaskCommandResult>;
  /** Lets the task's runs be claimed again. */
  resume(command: TaskCommand): Promise<TaskCommandResult>;
}

/** Builds `operator.tasks` for one queue. */
export function operatorTasks(scope: OperatorScope): OperatorTasks {
  return {
    list: () => listTasks(scope),
    pause: (command) => taskCommand(scope, true, command),
    resume: (command) => taskCommand(scope, false, command),
  };
}

async function listTasks(scope: OperatorScope): Promise<TaskInfo[]> {
  scope.assertUsable('operator.tasks.list');
  const { engine } = scope;
  const [tasks, stats] = await Promise.all([engine.store.listTasks(engine.namespace), operatorStats(scope, {})]);
  return tasks.map((task) => {
    const byStatus = Object.fromEntries(Object.keys(stats.byStatus).map((s) => [s, 0])) as StatusCounts;
    for (const version of stats.byTask) {
      if (version.name !== task.name) continue;
      for (const [status, count] of Object.entries(version.byStatus)) byStatus[status as keyof StatusCounts] += count;
    }
    return {
      name: task.name,
      versions: task.versions,
      paused: task.paused,
      revision: task.revision,
      flow: task.flow,
      byStatus,
    };
  });
}

/**
 * A pause or resume: once per `commandId` (a reused id answers its first result, `COMMAND_CONFLICT` if the request
 * differs), refused with `REVISION_CONFLICT` when the task moved past `expectedRevision`; `noop` when it already is so.
 */
async function taskCommand(scope: OperatorScope, pause: boolean, input: TaskCommand): Promise<TaskCommandResult> {
  const { engine, assertUsable } = scope;
  const operation = `operator.tasks.${pause ? 'pause' : 'resume'}`;
  assertUsable(operation);
  const cmd = parse(taskCommandSchema, input, operation);
  const requestHash = hash({
    op: operation,
    task: cmd.task,
    expectedRevision: cmd.expectedRevision,
    reason: cmd.reason,
  });
  const now = engine.now();
  const outcome = await engine.store.runCommand<TaskCommandResult>(
    engine.namespace,
    { commandId: cmd.commandId, requestHash, taskName: cmd.task, now },
    ({ task }) => {
      if (task === null) return { run: null, event: null, result: { kind: 'not_found', task: cmd.task } };
      const write = decideTaskCommand(task, pause, cmd, operation, now);
      const result: TaskCommandResult =
        write === null
          ? { kind: 'noop', task: task.name, revision: task.revision, paused: task.paused, changed: false }
          : { kind: 'applied', task: task.name, revision: write.revision, paused: write.paused, changed: true };
      return { run: null, event: null, task: write, result };
    },
  );
  if (outcome.replayed && outcome.requestHash !== requestHash) {
    throw new DocketError('COMMAND_CONFLICT', `command ${cmd.commandId} was already used for another request`, {
      operation,
      commandId: cmd.commandId,
    });
  }
  if (!outcome.replayed && outcome.result.kind === 'applied' && !pause) engine.wake();
  return outcome.result;
}

/** The revision check, then the task's next record, or `null` when it already is paused (or not). */
function decideTaskCommand(
  task: TaskRecord,
  pause: boolean,
  cmd: TaskCommand,
  operation: string,
  now: number,
): TaskRecord | null {
  if (task.revision !== cmd.expectedRevision) {
    throw new DocketError(
      'REVISION_CONFLICT',
      `task ${cmd.task} is at revision ${task.revision}, not ${cmd.expectedRevision}`,
      {
        operation,
        commandId: cmd.commandId,
        details: { revision: task.revision },
      },
    );
  }
  if (task.paused === pause) return null;
  return { ...task, paused: pause, revision: task.revision + 1, updatedAt: now };
}
