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
import { cleanText, formatIssues, strictObject } from '../../util/validation.js';
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

const eventSchema = strictObject({
  id: v.pipe(v.string(), v.minLength(1), v.maxBytes(256), cleanText),
  type: v.pipe(v.string(), v.minLength(1), v.maxBytes(128), cleanText),
  payload: v.optional(v.unknown()),
});

/**
 * Delivers an event to a run waiting for it: receiving the event and `waiting -> pending` (`EVENT_RECEIVED`) commit
 * in one transaction. The same id and content again is a duplicate; the same id with other content is
 * `EVENT_CONFLICT`; a run that is not waiting for an event is never restarted (`accepted: false`). When this queue
 * has the task's `validateEvent` handler, a refusal fails the run (`TRIGGER_INVALID`).
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
  const received: ReceivedEvent = {
    id: parsed.output.id,
    type: parsed.output.type,
    hash: createHash('sha256')
      .update(canonicalJson({ id: parsed.output.id, type: parsed.output.type, payload: payload ?? null }))
      .digest('hex'),
  };

  const before = await engine.store.getRun(engine.namespace, runId);
  if (before === null) return { accepted: false, duplicate: false, status: null };
  // validateEvent may be async, so it runs before the transaction; the transaction re-checks that the run still waits.
  let verdict: true | string = true;
  const validate = engine.tasks.get(`${before.taskName}@${before.taskVersion}`)?.handlers?.validateEvent;
  if (validate && before.status === 'waiting' && before.triggerEvent === null) {
    // A frozen copy: the caller's own payload object is neither shared with the handler nor frozen.
    const shown = { id: received.id, type: received.type, ...(payload === undefined ? {} : { payload }) };
    const copy = frozenCopy(shown as Json) as unknown as TriggerEvent;
    const answer = await validate({ query: deepFreeze(before.query), event: copy });
    verdict = answer === true ? true : typeof answer === 'string' && answer.length > 0 ? answer : 'refused';
  }

  const outcome = await engine.store.transact<TriggerDelivery>(
    engine.namespace,
    runId,
    (_tx, current) => {
      const decided = decideTriggerDelivery(current, received, verdict, engine.now());
      return { write: decided.kind === 'accepted' ? decided.write : null, value: decided };
    },
    { pure: true },
  );

  switch (outcome.kind) {
    case 'missing':
      return { accepted: false, duplicate: false, status: null };
    case 'conflict':
      throw new DocketError('EVENT_CONFLICT', `event ${received.id} was already received with other content`, {
        operation,
        runId,
        eventId: received.id,
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
