import type { Json } from '@docket/core';
import { type CommandPlan, type CommandRequest, decideCommand, replayedReceipt, rowToEvent } from '@docket/core/store';
import type { SqliteContext } from '../context.js';
import { selectTask, writeTask } from '../flow/flow.js';
import type { Statements } from '../statements.js';
import { writeEvent } from '../writes/callback-event-writes.js';
import { applyWrite } from '../writes/run-writes.js';

function commandInTransaction<T extends Json>(
  s: Statements,
  namespace: string,
  command: CommandRequest,
  plan: CommandPlan<T>,
): { result: T; replayed: boolean; requestHash: string } {
  const receipt = s.selectCommand.get(namespace, command.commandId);
  if (receipt) return replayedReceipt<T>(receipt.result, receipt.request_hash);
  const runRow = command.runId === undefined ? undefined : s.selectRun.get(namespace, command.runId);
  const eventRow = command.eventId === undefined ? undefined : s.selectEvent.get(namespace, command.eventId);
  const run = runRow ? s.runOf(runRow) : null;
  const event = eventRow ? rowToEvent(eventRow) : null;
  const task = command.taskName === undefined ? null : selectTask(s, namespace, command.taskName);
  const decided = decideCommand(plan, run, event, task);
  if (decided.run !== null) applyWrite(s, decided.run.current, decided.run.write);
  if (decided.task !== null) writeTask(s, task, decided.task);
  if (decided.event !== null) writeEvent(s, decided.event.current, decided.event.write);
  s.insertCommand.run(namespace, command.commandId, command.requestHash, JSON.stringify(decided.result), command.now);
  return { result: decided.result, replayed: false, requestHash: command.requestHash };
}

/**
 * `Store.runCommand`: a stored receipt is answered as it is; otherwise core's plan decides, and its writes and the
 * receipt commit together. An error thrown by the plan reaches the caller as it is.
 */
export function runCommand<T extends Json>(
  ctx: SqliteContext,
  namespace: string,
  command: CommandRequest,
  plan: CommandPlan<T>,
): Promise<{ result: T; replayed: boolean; requestHash: string }> {
  let planError: unknown;
  const planned: CommandPlan<T> = (current) => {
    try {
      return plan(current);
    } catch (error) {
      planError = error;
      throw error;
    }
  };
  return ctx.write(
    'store.runCommand',
    ({ s }) => commandInTransaction(s, namespace, command, planned),
    undefined,
    () => planError,
  );
}
