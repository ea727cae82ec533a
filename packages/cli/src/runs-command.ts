import type { Operator, RunStatus } from '@docket/core';
import { type ChildStatuses, historyTable, runDetails, runsTable } from './format.js';

/** What the `runs` commands read of the parsed flags. */
export interface RunsFlags {
  task?: string | undefined;
  group?: string | undefined;
  parent?: string | undefined;
  schedule?: string | undefined;
  status?: string | undefined;
  limit: number | undefined;
  cursor?: string | undefined;
  payloads?: boolean | undefined;
  reason?: string | undefined;
  expectedRevision: number | undefined;
  'command-id'?: string | undefined;
}

/** How many of a parent's children (the newest 200) are in each status. */
async function childStatuses(op: Operator, parentRunId: string): Promise<ChildStatuses> {
  const page = await op.runs.list({ parentRunId, limit: 200 });
  const counts: Partial<Record<RunStatus, number>> = {};
  for (const item of page.items) counts[item.status] = (counts[item.status] ?? 0) + 1;
  return { counts, listed: page.items.length, more: page.nextCursor !== null };
}

/** `docket runs list|get|history|cancel|pause|resume|retry`: answers the exit code; `print` writes JSON or text. */
export async function runsCommand(
  op: Operator,
  command: string,
  id: string,
  o: RunsFlags,
  print: (value: unknown, human: () => string) => void,
  colour: boolean,
): Promise<number> {
  switch (command) {
    case 'runs list': {
      const page = await op.runs.list({
        ...(o.task ? { taskName: o.task } : {}),
        ...(o.group ? { group: o.group } : {}),
        ...(o.parent ? { parentRunId: o.parent } : {}),
        ...(o.schedule ? { scheduleId: o.schedule } : {}),
        ...(o.status ? { status: o.status as RunStatus } : {}),
        ...(o.limit === undefined ? {} : { limit: o.limit }),
        ...(o.cursor ? { cursor: o.cursor } : {}),
        ...(o.payloads ? { payloads: true } : {}),
      });
      print(page, () => {
        const lines = [page.items.length === 0 ? 'no runs' : runsTable(page.items, colour)];
        if (page.nextCursor) lines.push(`more: --cursor ${page.nextCursor}`);
        return lines.join('\n');
      });
      return 0;
    }
    case 'runs get': {
      const run = await op.runs.get(id);
      const children = run && run.children.total > 0 ? await childStatuses(op, run.runId) : null;
      print(run, () => (run ? runDetails(run, colour, children) : `no run ${id}`));
      return run ? 0 : 1;
    }
    case 'runs history': {
      const history = await op.runs.history(id);
      print(history, () => (history.length === 0 ? `no run ${id}` : historyTable(history, colour)));
      return history.length > 0 ? 0 : 1;
    }
    case 'runs cancel':
    case 'runs pause':
    case 'runs resume':
    case 'runs retry': {
      const verb = command.slice(5) as 'cancel' | 'pause' | 'resume' | 'retry';
      let expectedRevision = o.expectedRevision;
      if (expectedRevision === undefined) {
        const run = await op.runs.get(id);
        if (!run) {
          print({ kind: 'not_found', runId: id }, () => `no run ${id}`);
          return 1;
        }
        expectedRevision = run.revision;
      }
      // A generated command id makes this call safe to retry by hand: the same id returns the first result.
      const commandId = o['command-id'] ?? `cli-${verb}-${id}-${expectedRevision}`;
      const result = await op.runs[verb]({ runId: id, expectedRevision, reason: o.reason as string, commandId });
      print(result, () =>
        result.kind === 'not_found'
          ? `no run ${id}`
          : `${result.kind}: run ${id} is ${result.status} at revision ${result.revision}${result.changed ? '' : ' (unchanged)'}`,
      );
      return result.kind === 'not_found' ? 1 : 0;
    }
    default:
      throw new Error(`internal: not a runs command: ${command}`);
  }
}
