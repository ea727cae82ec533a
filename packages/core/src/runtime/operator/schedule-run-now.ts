import { type ResolvedDefinition, storedDefinition } from '../../machine/definition.js';
import { iso } from '../../machine/run-types.js';
import { scheduleKeyPrefix } from '../../machine/schedule-slots.js';
import type { ScheduleRecord } from '../../machine/schedule-types.js';
import { DocketError } from '../../util/errors.js';
import type { Json } from '../../util/json.js';
import type { Engine } from '../queue/engine.js';
import { prepareStart } from '../task/start-input.js';
import { hash, type OperatorScope, parse, runNowSchema } from './input.js';

/** What `schedules.runNow` takes: the schedule, why, and the command's id (once per id, as every operator command). */
export interface ScheduleRunNowCommand {
  id: string;
  reason: string;
  commandId: string;
}

/** What `schedules.runNow` answers: the run it started, or `not_found`. */
export type ScheduleRunNowResult = { kind: 'not_found'; id: string } | { kind: 'applied'; id: string; runId: string };

/**
 * `operator.schedules.runNow`: starts one run of the schedule's task now, with the schedule's query and limits, the
 * key `schedule:<id>:now:<hash of commandId>` (so it is listed with the schedule's runs) and the trigger `{ schedule, at }`. The
 * schedule itself is left as it is (its next slot still fires). The task need not be declared in this queue: its
 * registered definition is read from the store. Once per `commandId`; `COMMAND_CONFLICT` if the request differs.
 */
export async function runScheduleNow(
  scope: OperatorScope,
  input: ScheduleRunNowCommand,
): Promise<ScheduleRunNowResult> {
  const operation = 'operator.schedules.runNow';
  scope.assertUsable(operation);
  const cmd = parse(runNowSchema, input, operation);
  const { engine } = scope;
  const { namespace } = engine;
  const requestHash = hash({ op: 'runNow', id: cmd.id, reason: cmd.reason });
  const seen = await engine.store.transactSchedule(namespace, cmd.id, (current) => ({
    schedule: null,
    runs: [],
    receipt: null,
    value: current,
  }));
  const def = seen === null ? null : await definitionOf(engine, seen, operation);
  return engine.store.transactSchedule<ScheduleRunNowResult>(
    namespace,
    cmd.id,
    (current, receipt) => {
      if (receipt !== null) {
        if (receipt.requestHash === requestHash) {
          return { schedule: null, runs: [], receipt: null, value: receipt.result as ScheduleRunNowResult };
        }
        throw new DocketError('COMMAND_CONFLICT', `command ${cmd.commandId} was already used for another request`, {
          operation,
          commandId: cmd.commandId,
        });
      }
      if (current === null)
        return { schedule: null, runs: [], receipt: null, value: { kind: 'not_found', id: cmd.id } };
      if (def === null || current.taskName !== def.name || current.taskVersion !== def.version) {
        throw new DocketError('REVISION_CONFLICT', `schedule ${cmd.id} changed while its run was prepared`, {
          operation,
          commandId: cmd.commandId,
          details: { revision: current.revision },
        });
      }
      const { run, history } = nowRun(engine, def, current, cmd.commandId, operation);
      history.actor = 'operator';
      history.detail = { reason: cmd.reason, commandId: cmd.commandId };
      const value: ScheduleRunNowResult = { kind: 'applied', id: cmd.id, runId: run.runId };
      const receiptToKeep = { commandId: cmd.commandId, requestHash, result: value as Json };
      return { schedule: null, runs: [{ run, history }], receipt: receiptToKeep, value };
    },
    cmd.commandId,
  );
}

/** The run of a "run now": as a slot's run, keyed by the command (a hash of its id) instead of a slot. */
function nowRun(
  engine: Engine,
  def: ResolvedDefinition,
  schedule: ScheduleRecord,
  commandId: string,
  operation: string,
) {
  const idempotencyKey = `${scheduleKeyPrefix(schedule.id)}now:${hash({ commandId }).slice(0, 24)}`;
  const input = { query: schedule.query, limits: schedule.limits, idempotencyKey };
  const started = prepareStart(engine, def, input, operation);
  started.run.trigger = { schedule: schedule.id, at: iso(started.run.createdAt) };
  return started;
}

/**
 * The schedule's task definition: this queue's own when it declares the task, else the one registered in the store
 * (a dashboard's queue declares none). A task never registered is `CONFIG_INVALID`.
 */
async function definitionOf(engine: Engine, schedule: ScheduleRecord, operation: string): Promise<ResolvedDefinition> {
  const { taskName, taskVersion } = schedule;
  const local = engine.tasks.get(`${taskName}@${taskVersion}`);
  if (local !== undefined) return local.definition;
  const stored = await engine.store.getDefinition(engine.namespace, taskName, taskVersion);
  if (stored === null) {
    throw new DocketError(
      'CONFIG_INVALID',
      `task ${taskName}@${taskVersion} of schedule ${schedule.id} is not registered`,
      {
        operation,
        details: { field: 'id' },
      },
    );
  }
  return storedDefinition(stored);
}
