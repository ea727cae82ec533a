import type { HistoryEntry, RunInfo, RunListItem, RunStatus } from '@docket/core';

/**
 * Whether to colour output, by the usual conventions: `NO_COLOR` set to anything but the empty string turns colour
 * off; `FORCE_COLOR` turns it on even off a terminal (`0` or `false` turn it off); otherwise colour on a terminal.
 */
export function useColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force !== 'false';
  return Boolean(stream.isTTY);
}

const WIDE: readonly [number, number][] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x20000, 0x3fffd],
];
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * The columns `text` takes in a terminal: wide East Asian characters and emoji take two, combining marks none,
 * everything else one; colour codes take none.
 */
export function displayWidth(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the ANSI colour codes this module adds.
  const plain = text.replace(/\u001b\[\d+m/g, '');
  let width = 0;
  for (const { segment } of graphemes.segment(plain)) {
    const first = segment.codePointAt(0) ?? 0;
    if (/\p{Extended_Pictographic}/u.test(segment) || WIDE.some(([a, b]) => first >= a && first <= b)) width += 2;
    else if (!/^\p{M}+$/u.test(segment)) width += 1;
  }
  return width;
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

/** Aligns rows of cells into columns by their display width (wide characters count two, colour codes none). */
export function table(header: string[], rows: string[][]): string {
  const visible = displayWidth;
  const widths = header.map((h, i) => Math.max(visible(h), ...rows.map((r) => visible(r[i] ?? ''))));
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
export function runDetails(run: RunInfo, colour: boolean, children: ChildStatuses | null = null): string {
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
    ['parent', run.parentRunId ?? '-'],
    ['children', childrenLine(run, children, colour)],
    ['query', JSON.stringify(run.query)],
    ['state', JSON.stringify(run.state)],
    ['created', run.createdAt],
    ['updated', run.updatedAt],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

/** A parent's children counted by status (of the `listed` newest; `more` when there are others). */
export interface ChildStatuses {
  counts: Partial<Record<RunStatus, number>>;
  listed: number;
  more: boolean;
}

/** The `children` line of `runDetails`: settled of total, the statuses at a glance, and how to list them. */
function childrenLine(run: RunInfo, children: ChildStatuses | null, colour: boolean): string {
  if (run.children.total === 0) return '-';
  const settled = `${run.children.settled} of ${run.children.total} settled`;
  if (children === null) return settled;
  const statuses = Object.entries(children.counts)
    .map(([status, n]) => `${paint(status, colour)} ${n}`)
    .join(', ');
  const scope = children.more ? ` (newest ${children.listed})` : '';
  return `${settled}; ${statuses}${scope}; list: docket runs list --parent ${run.runId}`;
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
