import { describe, expect, it } from 'vitest';
import { cronProblem, decideFiring, MAX_CATCH_UP, nextSlot } from './schedule-slots.js';
import type { ScheduleRecord } from './schedule-types.js';

const HOUR = 3_600_000;

function schedule(cron: string, timezone: string, from: number, misfire: ScheduleRecord['misfire'] = 'latest') {
  return {
    namespace: 'default',
    id: 's',
    taskName: 't',
    taskVersion: '1',
    cron,
    timezone,
    query: null,
    limits: {},
    misfire,
    enabled: true,
    nextAt: nextSlot(cron, timezone, from),
    lastSlotAt: null,
    revision: 1,
    createdAt: from,
    updatedAt: from,
  } satisfies ScheduleRecord;
}

/** Fires `s` as a consumer polling every hour would, from `from` to `to`: every slot it made a run for. */
function fireHourly(s: ScheduleRecord, from: number, to: number): number[] {
  const fired: number[] = [];
  for (let now = from; now <= to; now += HOUR) {
    if (s.nextAt === null || s.nextAt > now) continue;
    const firing = decideFiring(s, now, HOUR);
    fired.push(...firing.slots);
    s.nextAt = firing.nextAt;
    s.lastSlotAt = firing.lastSlotAt;
  }
  return fired;
}

describe('schedule slots (croner)', () => {
  it('fires 30 2 * * * in New York once a day across the 2027 spring-forward day, at 03:00 on the day without 02:30', () => {
    const from = Date.UTC(2027, 2, 12, 12);
    const s = schedule('30 2 * * *', 'America/New_York', from);
    const fired = fireHourly(s, from, Date.UTC(2027, 2, 16, 12)).map((ms) => new Date(ms).toISOString());
    // 02:30 EST is 07:30Z; on 14 March 02:00-03:00 does not exist and the slot moves to 03:00 EDT (07:00Z).
    expect(fired).toEqual([
      '2027-03-13T07:30:00.000Z',
      '2027-03-14T07:00:00.000Z',
      '2027-03-15T06:30:00.000Z',
      '2027-03-16T06:30:00.000Z',
    ]);
  });

  it('fires it once on the fall-back day, whose 01:00-02:00 repeats but whose 02:30 comes once', () => {
    const from = Date.UTC(2027, 10, 5, 12);
    const s = schedule('30 2 * * *', 'America/New_York', from);
    const fired = fireHourly(s, from, Date.UTC(2027, 10, 9, 12)).map((ms) => new Date(ms).toISOString());
    expect(fired).toEqual([
      '2027-11-06T06:30:00.000Z',
      '2027-11-07T07:30:00.000Z',
      '2027-11-08T07:30:00.000Z',
      '2027-11-09T07:30:00.000Z',
    ]);
    expect(new Set(fired).size).toBe(fired.length);
  });

  it('catches up at most the latest 100 missed slots with misfire all, and passes over the rest', () => {
    const from = Date.UTC(2027, 0, 1);
    const s = schedule('* * * * *', 'UTC', from, 'all');
    const now = from + 500 * 60_000 + 30_000;
    const firing = decideFiring(s, now, 2_000);
    expect(firing.missed).toBe(500);
    expect(firing.slots).toHaveLength(MAX_CATCH_UP);
    expect(firing.slots.at(-1)).toBe(from + 500 * 60_000);
    expect(firing.nextAt).toBe(from + 501 * 60_000);
  });

  it('reads six fields as seconds first, and refuses other field counts and unknown zones', () => {
    expect(nextSlot('*/10 * * * * *', 'UTC', Date.UTC(2027, 0, 1, 0, 0, 3))).toBe(Date.UTC(2027, 0, 1, 0, 0, 10));
    expect(cronProblem('* * * *', 'UTC')?.field).toBe('cron');
    expect(cronProblem('0 0 1 1 * 2027 *', 'UTC')?.field).toBe('cron');
    expect(cronProblem('* * * * *', 'Nowhere/City')?.field).toBe('timezone');
    expect(cronProblem('0 9 * * MON-FRI', 'Europe/Berlin')).toBeNull();
  });
});
