import * as v from 'valibot';
import { nextSlot } from '../../machine/schedule-slots.js';
import { type ScheduleInfo, type ScheduleRecord, toScheduleInfo } from '../../machine/schedule-types.js';
import { DocketError } from '../../util/errors.js';
import type { Json } from '../../util/json.js';
import { cleanText, nameSchema, strictObject } from '../../util/validation.js';
import { hash, listRequest, type OperatorScope, parse, sliceOf } from './input.js';
import { runScheduleNow, type ScheduleRunNowCommand, type ScheduleRunNowResult } from './schedule-run-now.js';

/** An operator command on one schedule. */
export interface ScheduleCommand {
  id: string;
  expectedRevision: number;
  reason: string;
  commandId: string;
}

/** What `schedules.pause|resume` answer. */
export type ScheduleCommandResult =
  | { kind: 'not_found'; id: string }
  | { kind: 'applied' | 'noop'; id: string; revision: number; enabled: boolean; changed: boolean };

/** `operator.schedules`: list, pause, resume and run now any schedule of the namespace. */
export interface OperatorSchedules {
  /** Schedules in id order, `limit` (default 50, at most 200) at a time. */
  list(options?: { limit?: number; cursor?: string }): Promise<{ items: ScheduleInfo[]; nextCursor: string | null }>;
  /** Stops a schedule from firing until it is resumed; runs it made stay. */
  pause(command: ScheduleCommand): Promise<ScheduleCommandResult>;
  /** Lets a paused schedule fire again from its next slot after now (slots of the pause are not caught up). */
  resume(command: ScheduleCommand): Promise<ScheduleCommandResult>;
  /** Starts one run of the schedule now, with its query and a key of its own; the schedule's slots are unchanged. */
  runNow(command: ScheduleRunNowCommand): Promise<ScheduleRunNowResult>;
}

const listSchema = strictObject({
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(200))),
  cursor: v.optional(v.string()),
});
const commandSchema = strictObject({
  id: nameSchema,
  expectedRevision: v.pipe(v.number(), v.integer(), v.minValue(1)),
  reason: v.pipe(v.string(), v.minBytes(1), v.maxBytes(1024), cleanText),
  commandId: v.pipe(v.string(), v.minBytes(1), v.maxBytes(128), cleanText),
});

/** Builds `operator.schedules`. */
export function operatorSchedules(scope: OperatorScope): OperatorSchedules {
  const { engine } = scope;
  return {
    async list(options = {}) {
      const { filter, before, limit } = listRequest(scope, 'operator.schedules.list', listSchema, options, () => ({
        schedules: true,
      }));
      const rows = await engine.store.listSchedules({ namespace: engine.namespace, after: before, limit: limit + 1 });
      const { slice, nextCursor } = sliceOf(rows, limit, (s) => s.id, filter);
      return { items: slice.map(toScheduleInfo), nextCursor };
    },
    pause: (command) => scheduleCommand(scope, 'pause', command),
    resume: (command) => scheduleCommand(scope, 'resume', command),
    runNow: (command) => runScheduleNow(scope, command),
  };
}

/**
 * A pause or resume: once per `commandId` (a reused id answers its first result, `COMMAND_CONFLICT` if the request
 * differs), `REVISION_CONFLICT` when the schedule moved past `expectedRevision`, `noop` when it already is so.
 */
async function scheduleCommand(
  scope: OperatorScope,
  op: 'pause' | 'resume',
  input: ScheduleCommand,
): Promise<ScheduleCommandResult> {
  const operation = `operator.schedules.${op}`;
  scope.assertUsable(operation);
  const cmd = parse(commandSchema, input, operation);
  const { engine } = scope;
  const requestHash = hash({ op, id: cmd.id, expectedRevision: cmd.expectedRevision, reason: cmd.reason });
  return engine.store.transactSchedule<ScheduleCommandResult>(
    engine.namespace,
    cmd.id,
    (current, receipt) => {
      if (receipt !== null) {
        if (receipt.requestHash !== requestHash) {
          throw new DocketError('COMMAND_CONFLICT', `command ${cmd.commandId} was already used for another request`, {
            operation,
            commandId: cmd.commandId,
          });
        }
        return { schedule: null, runs: [], receipt: null, value: receipt.result as ScheduleCommandResult };
      }
      const { schedule, result } = decide(current, op, cmd, operation, engine.now());
      const keep =
        result.kind === 'not_found' ? null : { commandId: cmd.commandId, requestHash, result: result as Json };
      return { schedule, runs: [], receipt: keep, value: result };
    },
    cmd.commandId,
  );
}

function decide(
  current: ScheduleRecord | null,
  op: 'pause' | 'resume',
  cmd: ScheduleCommand,
  operation: string,
  now: number,
): { schedule: ScheduleRecord | null; result: ScheduleCommandResult } {
  if (current === null) return { schedule: null, result: { kind: 'not_found', id: cmd.id } };
  if (current.revision !== cmd.expectedRevision) {
    throw new DocketError(
      'REVISION_CONFLICT',
      `schedule ${cmd.id} is at revision ${current.revision}, not ${cmd.expectedRevision}`,
      { operation, commandId: cmd.commandId, details: { revision: current.revision } },
    );
  }
  const enabled = op === 'resume';
  if (current.enabled === enabled) {
    const { revision } = current;
    return { schedule: null, result: { kind: 'noop', id: cmd.id, revision, enabled, changed: false } };
  }
  const next: ScheduleRecord = { ...current, enabled, revision: current.revision + 1, updatedAt: now };
  if (enabled) next.nextAt = nextSlot(current.cron, current.timezone, now);
  return {
    schedule: next,
    result: { kind: 'applied', id: cmd.id, revision: next.revision, enabled, changed: true },
  };
}
