import { canonicalJson, type Json } from '../util/json.js';
import type { ReceivedEvent, RunRecord, RunStatus } from './run-types.js';
import { type RunWrite, transitionWrite } from './run-write.js';
import { transition } from './state-machine.js';

/** What delivering a trigger event to a run decides (`decideTriggerDelivery`). */
export type TriggerDelivery =
  | { kind: 'missing' }
  | { kind: 'conflict' }
  | { kind: 'duplicate' | 'ignored'; status: RunStatus }
  | { kind: 'accepted'; status: RunStatus; write: RunWrite };

/**
 * Decides a trigger event's delivery to `current` (the run as stored): the same event id again is a `duplicate` when
 * its content hash matches and a `conflict` otherwise; a run that is not `waiting` for this event type is `ignored`;
 * else the event is received (`EVENT_RECEIVED`, the run becomes `pending`) or, when the task's `validateEvent` refused
 * it (`verdict` is the refusal), its payload misses a field of the trigger's `match`, or it is `malformed` (an id or
 * type out of bounds: then whatever event the run waits for), fails the run (`TRIGGER_INVALID`). Pure.
 */
export function decideTriggerDelivery(
  current: RunRecord | null,
  received: ReceivedEvent,
  verdict: true | string,
  now: number,
  payload: Json | undefined = undefined,
  malformed: string | null = null,
): TriggerDelivery {
  if (current === null) return { kind: 'missing' };
  if (current.triggerEvent !== null && current.triggerEvent.id === received.id) {
    return current.triggerEvent.hash === received.hash
      ? { kind: 'duplicate', status: current.status }
      : { kind: 'conflict' };
  }
  const trigger = current.trigger;
  const waitsForEvent =
    current.status === 'waiting' && trigger !== null && 'event' in trigger && current.triggerEvent === null;
  if (!waitsForEvent || (malformed === null && trigger.event !== received.type)) {
    return { kind: 'ignored', status: current.status };
  }
  if (malformed !== null) verdict = malformed;
  else if (verdict === true && trigger.match !== undefined) verdict = matchProblem(trigger.match, payload) ?? true;
  const decision = transition(
    current,
    verdict === true
      ? { type: 'event_received', actor: 'producer', event: received, detail: { eventId: received.id } }
      : {
          type: 'event_invalid',
          actor: 'producer',
          event: received,
          detail: { eventId: received.id, reason: verdict },
        },
    now,
  );
  if (!decision.ok) return { kind: 'ignored', status: current.status };
  return { kind: 'accepted', status: decision.run.status, write: transitionWrite(decision) };
}

/** Why `payload` does not hold every field of `match` with an equal value, or `null` when it does. */
export function matchProblem(match: { [key: string]: Json }, payload: Json | undefined): string | null {
  const fields =
    payload !== null && typeof payload === 'object' && !Array.isArray(payload)
      ? payload
      : ({} as { [key: string]: Json });
  for (const [key, expected] of Object.entries(match)) {
    if (!Object.hasOwn(fields, key)) return `the event's payload has no ${key} (the trigger's match)`;
    if (canonicalJson(fields[key]) !== canonicalJson(expected)) {
      return `the event's payload ${key} does not match the trigger's (${canonicalJson(expected).slice(0, 100)})`;
    }
  }
  return null;
}
