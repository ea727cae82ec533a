import type { HistoryEntry, RunInfo, RunListItem } from '@docket/core';

/** Whether to colour output: only on a terminal, and never with NO_COLOR set. */
export function useColour(stream: NodeJS.WriteStream): boolean {
  return Boolean(stream.isTTY) && process.env.NO_COLOR === undefined;
}

const COLOURS: Record<string, number> = {
  success: 32,
  failed: 31,
  cancelled: 33,
  blocked: 35,
  running: 36,
  pausing: 36,
  paused: 34,
  retrying: 33,
};

/** Colours a status word when colour is on. */
export function paint(status: string, colour: boolean): string {
  const code = COLOURS[status];
  return colour && code ? `\u001b[${code}m${status}\u001b[0m` : status;
}

/** How long ago an ISO time was, short: `42s`, `5m`, `3h`, `2d`. */
export function age(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}

/** Aligns rows of cells into columns (the visible width ignores colour codes). */
export function table(header: string[], rows: string[][]): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the ANSI colour codes this module adds.
  const visible = (cell: string) => cell.replace(/\u001b\[\d+m/g, '').length;
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => visible(r[i] ?? ''))));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - visible(cell))))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The runs table: id, status, reason, task, page, attempt, age, revision. */
export function runsTable(runs: RunListItem[], colour: boolean): string {
  return table(
    ['RUN', 'STATUS', 'REASON', 'TASK', 'PAGE', 'ATTEMPT', 'AGE', 'REVISION'],
    runs.map((r) => [
      r.runId,
      paint(r.status, colour),
      r.reason,
      `${r.task.name}@${r.task.version}`,
      String(r.page),
      String(r.attempt),
      age(r.updatedAt),
      String(r.revision),
    ]),
  );
}

/** One run, field by field, callbacks included. */
export function runDetails(run: RunInfo, colour: boolean): string {
  const rows: [string, string][] = [
    ['run', run.runId],
    ['task', `${run.task.name}@${run.task.version}`],
    ['status', paint(run.status, colour)],
    ['reason', run.reason],
    ['revision', String(run.revision)],
    ['page', `${run.page} (batch ${run.batchId})`],
    ['attempt', String(run.attempt)],
    [
      'failures',
      `business ${run.businessFailures}, retries scheduled ${run.scheduledRetries}, recoveries ${run.recoveries}`,
    ],
    ['due', run.dueAt ?? '-'],
    ['trigger', run.trigger ? JSON.stringify(run.trigger) : '-'],
    ['deadline', run.limits.deadlineAt ?? '-'],
    ['model calls', `${run.limits.modelCalls.used} of ${run.limits.modelCalls.limit ?? 'unlimited'}`],
    [
      'callbacks',
      `pending ${run.callbacks.pending}, delivered ${run.callbacks.delivered}, dead letters ${run.callbacks.deadLetters}`,
    ],
    ['error', run.error ? `${run.error.code}: ${run.error.message}` : '-'],
    ['query', JSON.stringify(run.query)],
    ['state', JSON.stringify(run.state)],
    ['created', run.createdAt],
    ['updated', run.updatedAt],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

/** A run's history, oldest first. */
export function historyTable(history: HistoryEntry[], colour: boolean): string {
  return table(
    ['SEQ', 'AT', 'FROM', 'TO', 'REASON', 'ACTOR', 'DETAIL'],
    history.map((e) => [
      String(e.seq),
      e.at,
      e.from ?? '-',
      paint(e.to, colour),
      e.reason,
      e.actor,
      e.detail === undefined ? '' : JSON.stringify(e.detail),
    ]),
  );
}
