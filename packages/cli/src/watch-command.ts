import { once } from 'node:events';
import type { Queue, WatchedChange } from '@docket/core';

/** What `docket watch` was given. */
export interface WatchFlags {
  task: string | undefined;
  cursor: string | undefined;
  fromStart: boolean;
  json: boolean;
}

/** One change as a line: time, run, task, the move and its reason, the actor. */
export function changeLine(change: WatchedChange): string {
  const move = `${change.from ?? '(new)'} -> ${change.to}`;
  return `${change.at}  ${change.runId}  ${change.task.name}@${change.task.version}  ${move}  ${change.reason}  ${change.actor}`;
}

/**
 * `docket watch [--task <name>] [--cursor <c> | --from-start] [--json]`: prints the changes feed as it grows, from
 * now (or after the cursor, or from the oldest entry kept), until `stopped` (SIGINT or SIGTERM). With `--json`, one
 * JSON object per line, its `cursor` the place to resume from. Exit 0.
 */
export async function watchCommand(
  queue: Queue,
  flags: WatchFlags,
  io: { out: (text: string) => void; err: (text: string) => void },
  stopped: Promise<unknown> = Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]),
): Promise<number> {
  const controller = new AbortController();
  void stopped.then(() => controller.abort());
  const task = flags.task === undefined ? {} : { taskName: flags.task };
  // From now: the cursor is taken before the watch says it started, so nothing committed after that line is missed.
  const after =
    flags.cursor ?? (flags.fromStart ? undefined : (await queue.operator.changes({ ...task, from: 'now' })).next);
  const changes = queue.watch({ signal: controller.signal, ...task, ...(after === undefined ? {} : { after }) });
  io.err(`watching ${queue.namespace}${flags.task ? ` (task ${flags.task})` : ''}; Ctrl-C stops`);
  const out = io.out;
  for await (const change of changes) out(flags.json ? JSON.stringify(change) : changeLine(change));
  return 0;
}
