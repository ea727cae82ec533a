import { replayEvent } from '../../machine/event-machine.js';
import { type CallbackEventRecord, iso } from '../../machine/run-types.js';
import { DocketError } from '../../util/errors.js';
import { deadListSchema, hash, listRequest, type OperatorScope, parse, replaySchema, sliceOf } from './input.js';
import type { DeadLetter, Operator, ReplayResult } from './operator.js';

/** `operator.deadLetters`: list the callback events that used up their attempts, and replay one. */
export function operatorDeadLetters(scope: OperatorScope): Operator['deadLetters'] {
  const { engine } = scope;
  return {
    async list(options = {}) {
      const operation = 'operator.deadLetters.list';
      const { filter, before, limit } = listRequest(scope, operation, deadListSchema, options, () => ({
        deadLetters: true,
      }));
      const events = await engine.store.listCallbackEvents({
        namespace: engine.namespace,
        status: 'dead_letter',
        limit: limit + 1,
        before,
      });
      const { slice, nextCursor } = sliceOf(events, limit, (event) => event.eventId, filter);
      return { items: slice.map(deadLetterOf), nextCursor };
    },
    replay: (input) => replay(scope, input),
  };
}

function deadLetterOf(e: CallbackEventRecord): DeadLetter {
  return {
    eventId: e.eventId,
    runId: e.runId,
    kind: e.kind,
    revision: e.revision,
    deliveryAttempt: e.deliveryAttempt,
    error: e.lastError,
    deadAt: iso(e.deadAt ?? e.updatedAt),
  };
}

/** A dead letter back to `pending` (`replayGeneration + 1`), with the operator receipt rules of a run command. */
async function replay(scope: OperatorScope, input: Parameters<Operator['deadLetters']['replay']>[0]) {
  const { engine, assertUsable } = scope;
  const operation = 'operator.deadLetters.replay';
  assertUsable(operation);
  const cmd = parse(replaySchema, input, operation);
  const requestHash = hash({
    op: 'replay',
    eventId: cmd.eventId,
    expectedRevision: cmd.expectedRevision,
    reason: cmd.reason,
  });
  const outcome = await engine.store.runCommand<ReplayResult>(
    engine.namespace,
    { commandId: cmd.commandId, requestHash, eventId: cmd.eventId, now: engine.now() },
    ({ event }) => {
      if (event === null) return { run: null, event: null, result: { kind: 'not_found', eventId: cmd.eventId } };
      if (event.revision !== cmd.expectedRevision) {
        throw new DocketError(
          'REVISION_CONFLICT',
          `event ${cmd.eventId} is at revision ${event.revision}, not ${cmd.expectedRevision}`,
          { operation, eventId: cmd.eventId, commandId: cmd.commandId, details: { revision: event.revision } },
        );
      }
      const next = replayEvent(event, engine.now());
      const changed = next ?? event;
      const result: ReplayResult = {
        kind: next === null ? 'noop' : 'applied',
        eventId: changed.eventId,
        revision: changed.revision,
        status: changed.status,
        changed: next !== null,
      };
      return { run: null, event: next, result };
    },
  );
  if (outcome.replayed && outcome.requestHash !== requestHash) {
    throw new DocketError('COMMAND_CONFLICT', `command ${cmd.commandId} was already used for another request`, {
      operation,
      eventId: cmd.eventId,
      commandId: cmd.commandId,
    });
  }
  if (!outcome.replayed && outcome.result.kind === 'applied') engine.eventsWritten();
  return outcome.result;
}
