import type { CallbackEventRecord, RunRecord } from '../machine/run-types.js';
import type { RunWrite } from '../machine/run-write.js';
import type { Json } from '../util/json.js';
import { checkEventWrite, checkWrite } from './checks.js';
import type { CommandPlan, TaskRecord } from './contract.js';

/** What an operator command writes: each write checked against the row it was planned from, and the receipt. */
export interface DecidedCommand<T extends Json> {
  run: { current: RunRecord; write: RunWrite } | null;
  event: { current: CallbackEventRecord; write: CallbackEventRecord } | null;
  task: TaskRecord | null;
  result: T;
}

/**
 * Runs core's plan for an operator command against the run and event the store read (and locked), and checks each
 * write against its row: the part of `Store.runCommand` every store shares. The store applies the writes and stores
 * `result` as the command's receipt in the same transaction.
 */
export function decideCommand<T extends Json>(
  plan: CommandPlan<T>,
  run: RunRecord | null,
  event: CallbackEventRecord | null,
  task: TaskRecord | null = null,
): DecidedCommand<T> {
  const decided = plan({ run, event, task });
  let runWrite: DecidedCommand<T>['run'] = null;
  let eventWrite: DecidedCommand<T>['event'] = null;
  if (decided.run !== null) {
    if (run === null) throw new Error('internal: command write for a missing run');
    checkWrite(run, decided.run);
    runWrite = { current: run, write: decided.run };
  }
  if (decided.event !== null) {
    if (event === null) throw new Error('internal: command write for a missing event');
    checkEventWrite(event, decided.event);
    eventWrite = { current: event, write: decided.event };
  }
  const taskWrite = decided.task ?? null;
  if (taskWrite !== null) checkTaskWrite(task, taskWrite);
  return { run: runWrite, event: eventWrite, task: taskWrite, result: decided.result };
}

/** A task command's write changes `paused` (and `updatedAt`) of the task it read, one revision up. */
function checkTaskWrite(current: TaskRecord | null, write: TaskRecord): void {
  if (current === null) throw new Error('internal: command write for a missing task');
  if (
    write.revision !== current.revision + 1 ||
    write.name !== current.name ||
    write.namespace !== current.namespace ||
    write.flow !== current.flow ||
    write.holdUntil !== current.holdUntil ||
    write.groupHoldUntil !== current.groupHoldUntil
  ) {
    throw new Error('internal: a task command may change paused only, one revision up');
  }
}

/** The answer to a command whose receipt was already stored: its first result, as it was. */
export function replayedReceipt<T extends Json>(
  result: string,
  requestHash: string,
): { result: T; replayed: true; requestHash: string } {
  return { result: JSON.parse(result) as T, replayed: true, requestHash };
}
