import type { Json } from '../../util/json.js';
import { decideCommand } from '../commands.js';
import type { CommandPlan, CommandRequest } from '../contract.js';
import { clone, key, type MemoryState } from './state.js';

/** `Store.runCommand`: a stored receipt as it is, or core's decision, its writes and the receipt together. */
export function runCommand<T extends Json>(
  m: MemoryState,
  namespace: string,
  command: CommandRequest,
  plan: CommandPlan<T>,
): Promise<{ result: T; replayed: boolean; requestHash: string }> {
  return m.exclusive(() => {
    const ck = key(namespace, command.commandId);
    const receipt = m.commands.get(ck);
    if (receipt) return { result: clone(receipt.result) as T, replayed: true, requestHash: receipt.requestHash };
    const run = command.runId === undefined ? undefined : m.runs.get(key(namespace, command.runId));
    const event = command.eventId === undefined ? undefined : m.events.get(key(namespace, command.eventId));
    const task = command.taskName === undefined ? undefined : m.tasks.get(key(namespace, command.taskName));
    const decided = decideCommand(
      plan,
      run ? clone(run) : null,
      event ? clone(event) : null,
      task ? clone(task) : null,
    );
    if (decided.task !== null) m.tasks.set(key(namespace, decided.task.name), clone(decided.task));
    if (decided.run !== null) m.applyWrite(decided.run.write);
    if (decided.event !== null) {
      m.events.set(key(namespace, decided.event.current.eventId), clone(decided.event.write));
    }
    m.commands.set(ck, { requestHash: command.requestHash, result: clone(decided.result), createdAt: command.now });
    return { result: decided.result, replayed: false, requestHash: command.requestHash };
  });
}
