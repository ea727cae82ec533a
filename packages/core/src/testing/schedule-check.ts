import type { RunListItem } from '../runtime/operator.js';

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
