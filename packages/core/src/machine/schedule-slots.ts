import { Cron } from 'croner';
import type { Misfire, ScheduleRecord } from './schedule-types.js';

/**
 * The idempotency-key prefix of every run a schedule makes, `schedule:<id>:` (its slots' and its "run now" runs):
 * schedule ids hold no `:`, so no other schedule's keys start with it.
 */
export function scheduleKeyPrefix(id: string): string {
  return `schedule:${id}:`;
}

/** The most missed slots `misfire: 'all'` makes runs for in one catch-up. */
export const MAX_CATCH_UP = 100;
/** The most slots one firing steps through; past it, older slots are passed over without being counted. */
const MAX_STEPS = 10_000;

/** Why a cron expression or time zone was refused, or `null` when croner reads both. */
export function cronProblem(cron: string, timezone: string): { field: 'cron' | 'timezone'; message: string } | null {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    return { field: 'timezone', message: `unknown time zone ${JSON.stringify(timezone)}` };
  }
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return { field: 'cron', message: 'cron takes five or six fields' };
  let next: Date | null;
  try {
    next = new Cron(cron, { timezone, paused: true }).nextRun(new Date());
  } catch (error) {
    return { field: 'cron', message: (error as Error).message };
  }
  // croner looks years ahead: no next slot means a date that never comes (31 February).
  if (next === null) return { field: 'cron', message: `${JSON.stringify(cron)} never fires` };
  return null;
}

/** The first slot of `cron` in `timezone` strictly after `afterMs`, or `null` when there is none. */
export function nextSlot(cron: string, timezone: string, afterMs: number): number | null {
  const next = new Cron(cron, { timezone, paused: true }).nextRun(new Date(afterMs));
  return next === null ? null : next.getTime();
}

/** What a consumer does with a due schedule at `now`: the slots to make runs for, and where the schedule moves to. */
export interface Firing {
  /** Slot times to start one run each for, oldest first. */
  slots: number[];
  /** Slots that were due but no consumer saw on time (`2 * pollMs`, at least 2 s). */
  missed: number;
  nextAt: number | null;
  lastSlotAt: number | null;
}

/**
 * Decides a due schedule's firing (pure; croner reads the expression): every slot from `nextAt` up to `now` seen
 * within the on-time window is fired; older ones are missed, and `misfire` makes one run for the latest of them
 * (`latest`), none (`skip`) or one each, at most `MAX_CATCH_UP` of the latest (`all`).
 */
export function decideFiring(schedule: ScheduleRecord, now: number, onTimeMs: number): Firing {
  const cron = new Cron(schedule.cron, { timezone: schedule.timezone, paused: true });
  const after = (ms: number) => cron.nextRun(new Date(ms))?.getTime() ?? null;
  const due: number[] = [];
  let slot = schedule.nextAt;
  let steps = 0;
  while (slot !== null && slot <= now && steps++ < MAX_STEPS) {
    due.push(slot);
    slot = after(slot);
  }
  if (slot !== null && slot <= now) slot = after(now);
  const onTime = due.filter((s) => s >= now - onTimeMs);
  const missed = due.filter((s) => s < now - onTimeMs);
  return {
    slots: [...caughtUp(missed, schedule.misfire), ...onTime],
    missed: missed.length,
    nextAt: slot,
    lastSlotAt: due.at(-1) ?? schedule.lastSlotAt,
  };
}

function caughtUp(missed: number[], misfire: Misfire): number[] {
  if (misfire === 'skip' || missed.length === 0) return [];
  return misfire === 'latest' ? missed.slice(-1) : missed.slice(-MAX_CATCH_UP);
}
