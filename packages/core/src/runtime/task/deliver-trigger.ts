import { createHash } from 'node:crypto';
import * as v from 'valibot';
import type { ReceivedEvent, RunStatus } from '../../machine/run-types.js';
import { decideTriggerDelivery, type TriggerDelivery } from '../../machine/trigger-delivery.js';
import { DocketError } from '../../util/errors.js';
import { assertRunId } from '../../util/ids.js';
import {
  canonicalJson,
  deepFreeze,
  frozenCopy,
  JSON_STRUCTURE_LIMITS,
  type Json,
  jsonSnapshot,
} from '../../util/json.js';
import { formatIssues, isCleanText, strictObject } from '../../util/validation.js';
import type { Engine } from '../queue/engine.js';
import type { TriggerEvent } from './handlers.js';

/** What `queue.events.deliver` answers. */
export interface DeliverResult {
  /** The event fired the waiting run (`waiting -> pending`). A refused event (`failed`) is not accepted. */
  accepted: boolean;
  /** The same event (id and content) was already received by this run: nothing changed. */
  duplicate: boolean;
  /** The run's status after the call; `null` when there is no such run (or it was collected). */
  status: RunStatus | null;
}

const eventSchema = strictObject({ id: v.string(), type: v.string(), payload: v.optional(v.unknown()) });

/**
 * The event as the run keeps it, and why it is malformed (`null` when it is not). A malformed event (an id or type
 * out of bounds) gets an id of its own, made from its content, so that delivering the same bad event again is a
 * duplicate; it fails the waiting run (`TRIGGER_INVALID`) rather than leaving it waiting.
 */
function receivedOf(
  id: string,
  type: string,
  payload: Json | undefined,
): { event: ReceivedEvent; malformed: string | null } {
  const hash = createHash('sha256')
    .update(canonicalJson({ id, type, payload: payload ?? null }))
    .digest('hex');
  const idOk = fieldOk(id, 256);
  const typeOk = fieldOk(type, 128);
  if (idOk && typeOk) return { event: { id, type, hash }, malformed: null };
  const what = idOk ? 'type is not 1 to 128 bytes' : 'id is not 1 to 256 bytes';
  return {
    event: { id: `malformed:${hash.slice(0, 32)}`, type: typeOk ? type : 'malformed', hash },
    malformed: `the event's ${what} of well-formed text without NUL`,
  };
}

/** Whether an event's id (1..256 bytes) or type (1..128 bytes) is clean text within its bounds. */
const fieldOk = (text: string, most: number) =>
  text.length > 0 && Buffer.byteLength(text, 'utf8') <= most && isCleanText(text);

/**
 * Delivers an event to a run waiting for it: receiving the event and `waiting -> pending` (`EVENT_RECEIVED`) commit
 * in one transaction. The same id and content again is a duplicate; the same id with other content is
 * `EVENT_CONFLICT`; a run that is not waiting for an event is never restarted (`accepted: false`). When this queue
 * has the task's `validateEvent` handler, a refusal fails the run (`TRIGGER_INVALID`); so does, in every queue, a payload
 * that misses the trigger's `match`, or an id or type out of bounds.
 */
export async function deliverEvent(engine: Engine, runId: string, event: TriggerEvent): Promise<DeliverResult> {
  const operation = 'events.deliver';
  assertRunId(runId, operation);
  const parsed = v.safeParse(eventSchema, event);
  if (!parsed.success) {
    const issues = formatIssues(parsed.issues);
    throw new DocketError('CONFIG_INVALID', `invalid event: ${issues[0]?.path}: ${issues[0]?.message}`, {
      operation,
      runId,
      details: { issues },
    });
  }
  const payloadLimits = { bytes: engine.options.limits.queryBytes, ...JSON_STRUCTURE_LIMITS };
  const payload =
    event.payload === undefined ? undefined : jsonSnapshot(event.payload, 'event.payload', payloadLimits, operation);
  const received = receivedOf(parsed.output.id, parsed.output.type, payload);

  const before = await engine.store.getRun(engine.namespace, runId);
  if (before === null) return { accepted: false, duplicate: false, status: null };
  // validateEvent may be async, so it runs before the transaction; the transaction re-checks that the run still waits.
  let verdict: true | string = true;
  const validate = engine.tasks.get(`${before.taskName}@${before.taskVersion}`)?.handlers?.validateEvent;
  if (validate && received.malformed === null && before.status === 'waiting' && before.triggerEvent === null) {
    // A frozen copy: the caller's own payload object is neither shared with the handler nor frozen.
    const shown = { id: received.event.id, type: received.event.type, ...(payload === undefined ? {} : { payload }) };
    const copy = frozenCopy(shown as Json) as unknown as TriggerEvent;
    const answer = await validate({ query: deepFreeze(before.query), event: copy });
    verdict = answer === true ? true : typeof answer === 'string' && answer.length > 0 ? answer : 'refused';
  }

  const outcome = await engine.store.transact<TriggerDelivery>(
    engine.namespace,
    runId,
    (_tx, current) => {
      const decided = decideTriggerDelivery(
        current,
        received.event,
        verdict,
        engine.now(),
        payload,
        received.malformed,
      );
      return { write: decided.kind === 'accepted' ? decided.write : null, value: decided };
    },
    { pure: true },
  );

  switch (outcome.kind) {
    case 'missing':
      return { accepted: false, duplicate: false, status: null };
    case 'conflict':
      throw new DocketError('EVENT_CONFLICT', `event ${received.event.id} was already received with other content`, {
        operation,
        runId,
        eventId: received.event.id,
      });
    case 'duplicate':
      return { accepted: false, duplicate: true, status: outcome.status };
    case 'ignored':
      return { accepted: false, duplicate: false, status: outcome.status };
    case 'accepted':
      engine.written(outcome.write);
      return { accepted: outcome.status === 'pending', duplicate: false, status: outcome.status };
  }
}
