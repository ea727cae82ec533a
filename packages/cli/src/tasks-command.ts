import type { Operator, TaskFlow } from '@docket/core';
import { table } from './format.js';

/** What the task commands read of the parsed flags. */
export interface TaskFlags {
  reason?: string | undefined;
  expectedRevision: number | undefined;
  'command-id'?: string | undefined;
}

/** A task's flow limits in one short line (`-` when it has none). */
export function flowText(flow: TaskFlow | null): string {
  if (flow === null) return '-';
  const limits = (l: { concurrency?: number; rate?: { max: number; perMs: number } }) =>
    [
      l.concurrency === undefined ? '' : `concurrency ${l.concurrency}`,
      l.rate === undefined ? '' : `rate ${l.rate.max}/${l.rate.perMs}ms`,
    ].filter(Boolean);
  const parts = limits(flow);
  if (flow.group !== undefined) parts.push(...limits(flow.group).map((part) => `group ${part}`));
  return parts.length === 0 ? '-' : parts.join(', ');
}

/** `docket tasks list|pause|resume`: answers the exit code; `print` writes JSON or the human text. */
export async function tasksCommand(
  op: Operator,
  verb: 'list' | 'pause' | 'resume',
  name: string,
  o: TaskFlags,
  print: (value: unknown, human: () => string) => void,
): Promise<number> {
  if (verb === 'list') {
    const tasks = await op.tasks.list();
    print(tasks, () => {
      if (tasks.length === 0) return 'no tasks';
      const rows = tasks.map((t) => [
        t.name,
        t.versions.join(','),
        t.paused ? 'paused' : 'active',
        flowText(t.flow),
        String(t.byStatus.pending + t.byStatus.retrying + t.byStatus.waiting),
        String(t.byStatus.running + t.byStatus.pausing),
        String(t.revision),
      ]);
      return table(['TASK', 'VERSIONS', 'STATE', 'FLOW', 'WAITING', 'RUNNING', 'REVISION'], rows);
    });
    return 0;
  }
  let expectedRevision = o.expectedRevision;
  if (expectedRevision === undefined) {
    expectedRevision = (await op.tasks.list()).find((t) => t.name === name)?.revision;
    if (expectedRevision === undefined) {
      print({ kind: 'not_found', task: name }, () => `no task ${name}`);
      return 1;
    }
  }
  // A generated command id makes the shell command safe to run again: the same id returns the first result.
  const commandId = o['command-id'] ?? `cli-task-${verb}-${name}-${expectedRevision}`;
  const result = await op.tasks[verb]({ task: name, expectedRevision, reason: o.reason as string, commandId });
  print(result, () =>
    result.kind === 'not_found'
      ? `no task ${name}`
      : `${result.kind}: task ${name} is ${result.paused ? 'paused' : 'active'} at revision ${result.revision}${result.changed ? '' : ' (unchanged)'}`,
  );
  return result.kind === 'not_found' ? 1 : 0;
}
