import { type Operator, RUN_STATUSES, type RunStatus, type Stats } from '@docket/core';
import { table } from './format.js';

/** `docket stats [--task <name>]`: counts by status and task, dead letters, the oldest due run's age. Exit 0. */
export async function statsCommand(
  op: Operator,
  taskName: string | undefined,
  print: (value: unknown, human: () => string) => void,
): Promise<number> {
  const stats = await op.stats(taskName === undefined ? {} : { taskName });
  print(stats, () => statsText(stats));
  return 0;
}

/** The human text of `docket stats`: one row per task version, a column per status any run has, then the totals. */
export function statsText(stats: Stats): string {
  const shown = RUN_STATUSES.filter((status) => stats.byStatus[status] > 0);
  const lines: string[] = [];
  if (shown.length === 0) lines.push('no runs');
  else {
    const counts = (byStatus: Record<RunStatus, number>) => shown.map((status) => String(byStatus[status]));
    const rows = stats.byTask.map((task) => [task.name, task.version, ...counts(task.byStatus)]);
    if (stats.byTask.length > 1) rows.push(['(all)', '', ...counts(stats.byStatus)]);
    lines.push(table(['TASK', 'VERSION', ...shown.map((status) => status.toUpperCase())], rows));
  }
  lines.push(`dead letters: ${stats.deadLetters}`);
  lines.push(`oldest due: ${stats.oldestDueAgeMs === null ? 'nothing due' : `${stats.oldestDueAgeMs} ms ago`}`);
  return lines.join('\n');
}
