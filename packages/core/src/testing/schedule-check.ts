import type { ChildProcess } from 'node:child_process';
import { expect } from 'vitest';
import type { RunListItem } from '../runtime/operator/operator.js';
import type { Queue } from '../runtime/queue/create-queue.js';
import type { BatchTask } from '../runtime/task/batch-task.js';
import { sleep, waitFor } from './harness.js';

/** What `checkSlotRuns` found among the runs of one schedule. */
export interface SlotRunsReport {
  /** Slots with a run, in order (ISO times). */
  slots: string[];
  /** Slots that got more than one run. */
  duplicates: string[];
  /** Slots between the first and the last that got no run. */
  missing: string[];
  /** Runs created before their slot's time. */
  early: string[];
}

/**
 * Checks the runs a schedule made every `everyMs`: one run per slot, none missing between the first and the last,
 * none created before its slot. For the multi-process schedule tests of each store.
 */
export function checkSlotRuns(runs: readonly RunListItem[], scheduleId: string, everyMs: number): SlotRunsReport {
  const mine = runs.filter((r) => (r.trigger as { schedule?: string } | null)?.schedule === scheduleId);
  const bySlot = new Map<string, number>();
  const early: string[] = [];
  for (const run of mine) {
    const at = (run.trigger as { at: string }).at;
    bySlot.set(at, (bySlot.get(at) ?? 0) + 1);
    if (Date.parse(run.createdAt) < Date.parse(at)) early.push(run.runId);
  }
  const slots = [...bySlot.keys()].sort();
  const duplicates = slots.filter((slot) => (bySlot.get(slot) ?? 0) > 1);
  const missing: string[] = [];
  const first = slots[0];
  const last = slots.at(-1);
  if (first !== undefined && last !== undefined) {
    for (let t = Date.parse(first); t <= Date.parse(last); t += everyMs) {
      const slot = new Date(t).toISOString();
      if (!bySlot.has(slot)) missing.push(slot);
    }
  }
  return { slots, duplicates, missing, early };
}

/** What `expectOneRunPerSecond` needs: a producer queue and task, and how to start one process that fires schedules. */
export interface ScheduleTrial {
  queue: Queue<never> | Queue<unknown>;
  task: BatchTask<unknown, unknown>;
  /** Spawns the `index`th process; it prints `ready` once its queue is ready, and exits 0 on SIGTERM. */
  spawnTicker(index: number): ChildProcess;
  processes: number;
  seconds: number;
}

/**
 * Runs a schedule of one slot per second for `seconds` with `processes` processes firing it, then checks its runs:
 * one per slot, none missing, none early, the first in the second after it was made. For each store's
 * multi-process schedule test.
 */
export async function expectOneRunPerSecond(trial: ScheduleTrial): Promise<SlotRunsReport> {
  const children = Array.from({ length: trial.processes }, (_, i) => watched(trial.spawnTicker(i)));
  try {
    await waitFor(() => children.every((c) => c.lines.includes('ready')), 'every ticker to be ready', 30_000);
    const created = Date.now();
    await trial.task.schedule('every-second', { cron: '* * * * * *', query: null });
    const scheduled = Date.now();
    await sleep(trial.seconds * 1000);
    await trial.task.unschedule('every-second');
    const stopped = Date.now();
    for (const child of children) child.proc.kill('SIGTERM');
    expect(await Promise.all(children.map((c) => c.exited))).toEqual(children.map(() => 0));
    const runs = await allRuns(trial.queue as Queue<unknown>, trial.task.name);
    const report = checkSlotRuns(runs, 'every-second', 1000);
    expect(report.duplicates).toEqual([]);
    expect(report.missing).toEqual([]);
    expect(report.early).toEqual([]);
    expect(Date.parse(report.slots[0] as string)).toBeGreaterThan(created);
    // The first slot is the first second after the schedule was written, somewhere in the call.
    expect(Date.parse(report.slots[0] as string)).toBeLessThanOrEqual(scheduled + 1000);
    expect(report.slots.length).toBeGreaterThanOrEqual(trial.seconds - 2);
    expect(Date.parse(report.slots.at(-1) as string)).toBeLessThanOrEqual(stopped);
    expect(runs.every((r) => r.status === 'success')).toBe(true);
    return report;
  } finally {
    for (const child of children) if (child.proc.exitCode === null) child.proc.kill('SIGKILL');
  }
}

function watched(proc: ChildProcess) {
  const lines: string[] = [];
  proc.stdout?.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  return { proc, lines, exited: new Promise<number | null>((resolve) => proc.on('exit', resolve)) };
}

async function allRuns(queue: Queue<unknown>, taskName: string): Promise<RunListItem[]> {
  const runs: RunListItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await queue.operator.runs.list({ taskName, limit: 200, ...(cursor ? { cursor } : {}) });
    runs.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return runs;
}
