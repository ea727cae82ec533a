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
 * it (`verdict` is the refusal), fails the run (`TRIGGER_INVALID`). Pure.
 */
export function decideTriggerDelivery(
  current: RunRecord | null,
  received: ReceivedEvent,
  verdict: true | string,
  now: number,
): TriggerDelivery {
  if (current === null) return { kind: 'missing' };
  if (current.triggerEvent !== null && current.triggerEvent.id === received.id) {
    return current.triggerEvent.hash === received.hash
      ? { kind: 'duplicate', status: current.status }
      : { kind: 'conflict' };
  }
  const waitsForThis =
    current.status === 'waiting' &&
    current.trigger !== null &&
    'event' in current.trigger &&
    current.trigger.event === received.type &&
    current.triggerEvent === null;
  if (!waitsForThis) return { kind: 'ignored', status: current.status };
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
