import { randomUUID } from 'node:crypto';
import type { Operator } from '@docket/core';
import { table } from './format.js';

/** What the schedule commands read of the parsed flags. */
export interface ScheduleFlags {
  limit: number | undefined;
  cursor?: string | undefined;
  reason?: string | undefined;
  expectedRevision: number | undefined;
  'command-id'?: string | undefined;
}

/** `docket schedules list|pause|resume|run-now`: answers the exit code; `print` writes JSON or the human text. */
export async function schedulesCommand(
  op: Operator,
  verb: 'list' | 'pause' | 'resume' | 'run-now',
  id: string,
  o: ScheduleFlags,
  print: (value: unknown, human: () => string) => void,
): Promise<number> {
  if (verb === 'list') {
    const page = await op.schedules.list({
      ...(o.limit === undefined ? {} : { limit: o.limit }),
      ...(o.cursor ? { cursor: o.cursor } : {}),
    });
    print(page, () => {
      if (page.items.length === 0) return 'no schedules';
      const rows = page.items.map((s) => [
        s.id,
        s.task.name,
        s.cron,
        s.timezone,
        s.enabled ? 'enabled' : 'paused',
        s.misfire,
        s.nextAt ?? '',
        s.lastSlotAt ?? '',
        String(s.revision),
      ]);
      const lines = [table(['SCHEDULE', 'TASK', 'CRON', 'ZONE', 'STATE', 'MISFIRE', 'NEXT', 'LAST', 'REVISION'], rows)];
      if (page.nextCursor) lines.push(`more: --cursor ${page.nextCursor}`);
      return lines.join('\n');
    });
    return 0;
  }
  if (verb === 'run-now') return runNow(op, id, o, print);
  let expectedRevision = o.expectedRevision;
  if (expectedRevision === undefined) {
    expectedRevision = await currentRevision(op, id);
    if (expectedRevision === undefined) {
      print({ kind: 'not_found', id }, () => `no schedule ${id}`);
      return 1;
    }
  }
  // A generated command id makes the shell command safe to run again: the same id returns the first result.
  const commandId = o['command-id'] ?? `cli-schedule-${verb}-${id}-${expectedRevision}`;
  const result = await op.schedules[verb]({ id, expectedRevision, reason: o.reason as string, commandId });
  print(result, () =>
    result.kind === 'not_found'
      ? `no schedule ${id}`
      : `${result.kind}: schedule ${id} is ${result.enabled ? 'enabled' : 'paused'} at revision ${result.revision}${result.changed ? '' : ' (unchanged)'}`,
  );
  return result.kind === 'not_found' ? 1 : 0;
}

/**
 * `schedules run-now`: one run of the schedule now. Each call starts a run unless `--command-id` repeats an earlier
 * one (then it answers that call's run): a retried shell command should pass the id it printed.
 */
async function runNow(
  op: Operator,
  id: string,
  o: ScheduleFlags,
  print: (value: unknown, human: () => string) => void,
): Promise<number> {
  const commandId = o['command-id'] ?? `cli-run-now-${id}-${randomUUID()}`;
  const result = await op.schedules.runNow({ id, reason: o.reason as string, commandId });
  print({ ...result, commandId }, () =>
    result.kind === 'not_found'
      ? `no schedule ${id}`
      : `started run ${result.runId} of schedule ${id} (command id ${commandId})`,
  );
  return result.kind === 'not_found' ? 1 : 0;
}

/** The schedule's current revision, read page by page, or `undefined` when there is no such schedule. */
async function currentRevision(op: Operator, id: string): Promise<number | undefined> {
  let cursor: string | undefined;
  do {
    const page = await op.schedules.list({ limit: 200, ...(cursor ? { cursor } : {}) });
    const found = page.items.find((s) => s.id === id);
    if (found) return found.revision;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return undefined;
}
