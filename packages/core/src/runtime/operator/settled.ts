import * as v from 'valibot';
import { strictObject } from '../../util/validation.js';
import { type OperatorScope, parse } from './input.js';

/** What `operator.settled()` answers: runs settled in each minute of a window ending with the current minute. */
export interface SettledPerMinute {
  /** When the counters were read (ISO-8601 UTC). */
  at: string;
  /** One entry per minute, oldest first, the last being the current minute; `count` is 0 for a quiet minute. */
  minutes: { start: string; count: number }[];
}

const settledSchema = strictObject({
  minutes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1440))),
});

const MINUTE = 60_000;

/**
 * `operator.settled({ minutes? })`: runs that moved into `success`, `failed` or `cancelled` per minute over the last
 * `minutes` (default 60, at most 1,440), from the store's per-minute counters.
 */
export async function operatorSettled(scope: OperatorScope, options: unknown): Promise<SettledPerMinute> {
  const { minutes = 60 } = parse(settledSchema, options, 'operator.settled');
  scope.assertUsable('operator.settled');
  const { engine } = scope;
  const now = engine.now();
  const last = now - (now % MINUTE);
  const first = last - (minutes - 1) * MINUTE;
  const found = await engine.store.settledPerMinute({ namespace: engine.namespace, since: first });
  const counts = new Map(found.map((row) => [row.minute, row.count]));
  const window: SettledPerMinute['minutes'] = [];
  for (let start = first; start <= last; start += MINUTE) {
    window.push({ start: new Date(start).toISOString(), count: counts.get(start) ?? 0 });
  }
  return { at: new Date(now).toISOString(), minutes: window };
}
