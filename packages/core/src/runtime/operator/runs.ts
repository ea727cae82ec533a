import { toRunInfo, toRunInfoWithoutPayloads } from '../../machine/run-info.js';
import type { CallbackCounts, HistoryEntry, RunRecord } from '../../machine/run-types.js';
import { transitionWrite } from '../../machine/run-write.js';
import { scheduleKeyPrefix } from '../../machine/schedule-slots.js';
import { transition } from '../../machine/state-machine.js';
import type { ListedRun, RunWrite } from '../../store/contract.js';
import { DocketError } from '../../util/errors.js';
import { assertRunId, runIdTimePrefix } from '../../util/ids.js';
import type { Json } from '../../util/json.js';
import { hash, listRequest, listSchema, type OperatorScope, parse, runCommandSchema, sliceOf } from './input.js';
import type { Operator, OperatorResult, RunCommand, RunListItem } from './operator.js';

/** `operator.runs`: list, read and steer any run of the namespace. */
export function operatorRuns(scope: OperatorScope): Operator['runs'] {
  const { engine, assertUsable } = scope;
  const { store, namespace } = engine;
  return {
    async list(options = {}) {
      const payloads = (options as { payloads?: unknown } | null)?.payloads === true;
      const { filter, before, limit } = listRequest(scope, 'operator.runs.list', listSchema, options, (o) => ({
        taskName: o.taskName ?? null,
        status: o.status ?? null,
        ...(o.group === undefined ? {} : { group: o.group }),
        ...(o.parentRunId === undefined ? {} : { parentRunId: o.parentRunId }),
        ...(o.idempotencyKey === undefined ? {} : { idempotencyKey: o.idempotencyKey }),
        ...(o.scheduleId === undefined ? {} : { scheduleId: o.scheduleId }),
        ...(o.createdFrom === undefined ? {} : { createdFrom: o.createdFrom }),
        ...(o.createdTo === undefined ? {} : { createdTo: o.createdTo }),
      }));
      const { createdFrom, createdTo, scheduleId, ...request } = filter;
      for (const [field, given] of [
        ['idempotencyKey', request.idempotencyKey],
        ['scheduleId', scheduleId],
      ]) {
        if (given !== undefined && request.taskName === null) {
          throw new DocketError('CONFIG_INVALID', `operator.runs.list: ${field} needs taskName (keys are per task)`, {
            operation: 'operator.runs.list',
            details: { field },
          });
        }
      }
      const bounds = createdBounds(createdFrom, createdTo, before);
      const byKey = scheduleId === undefined ? {} : { idempotencyKeyPrefix: scheduleKeyPrefix(scheduleId) };
      const runs = await store.listRuns({ ...request, ...byKey, ...bounds, limit: limit + 1, payloads });
      const { slice, nextCursor } = sliceOf(runs, limit, (run) => run.runId, filter);
      const callbacks = await store.callbackCountsOf(
        namespace,
        slice.map((run) => run.runId),
      );
      const items = slice.map((run, i) => listItem(run, callbacks[i] as CallbackCounts, payloads));
      return { items, nextCursor };
    },
    async get(runId) {
      assertUsable('operator.runs.get');
      assertRunId(runId, 'operator.runs.get');
      const run = await store.getRun(namespace, runId);
      return run ? toRunInfo(run, await store.callbackCounts(namespace, runId)) : null;
    },
    async history(runId): Promise<HistoryEntry[]> {
      assertUsable('operator.runs.history');
      assertRunId(runId, 'operator.runs.history');
      return store.getHistory(namespace, runId);
    },
    pause: (input) => runCommand(scope, 'pause', input),
    resume: (input) => runCommand(scope, 'resume', input),
    cancel: (input) => runCommand(scope, 'cancel', input),
    retry: (input) => runCommand(scope, 'retry', input),
  };
}

/**
 * A creation-time range as run-id bounds (ids start with their creation time): `from` at or above the first id of
 * `createdFrom`'s millisecond, `before` below the first id of `createdTo`'s (or the cursor's, whichever is lower).
 */
function createdBounds(
  createdFrom: string | undefined,
  createdTo: string | undefined,
  cursor: string | null,
): { before: string | null; from?: string } {
  const to = createdTo === undefined ? null : runIdTimePrefix(Date.parse(createdTo));
  const before = to === null ? cursor : cursor === null || to < cursor ? to : cursor;
  return createdFrom === undefined ? { before } : { before, from: runIdTimePrefix(Date.parse(createdFrom)) };
}

/** The run commands an operator can give. */
type RunOp = 'pause' | 'resume' | 'cancel' | 'retry';

/**
 * A pause, resume, cancel or retry: once per `commandId` (a reused id answers its first result, `COMMAND_CONFLICT` if the
 * request differs), refused with `REVISION_CONFLICT` when the run moved past `expectedRevision`.
 */
async function runCommand(scope: OperatorScope, op: RunOp, input: RunCommand): Promise<OperatorResult> {
  const { engine, assertUsable } = scope;
  const operation = `operator.runs.${op}`;
  assertUsable(operation);
  const cmd = parse(runCommandSchema, input, operation);
  assertRunId(cmd.runId, operation);
  const requestHash = hash({ op, runId: cmd.runId, expectedRevision: cmd.expectedRevision, reason: cmd.reason });
  let applied: RunWrite | null = null;
  const outcome = await engine.store.runCommand<OperatorResult>(
    engine.namespace,
    { commandId: cmd.commandId, requestHash, runId: cmd.runId, now: engine.now() },
    ({ run }) => {
      if (run === null) return { run: null, event: null, result: { kind: 'not_found', runId: cmd.runId } };
      const decided = decideRunCommand(run, op, cmd, operation, engine.now());
      applied = decided.write;
      return { run: decided.write, event: null, result: decided.result };
    },
  );
  if (outcome.replayed && outcome.requestHash !== requestHash) {
    throw new DocketError('COMMAND_CONFLICT', `command ${cmd.commandId} was already used for another request`, {
      operation,
      runId: cmd.runId,
      commandId: cmd.commandId,
    });
  }
  if (!outcome.replayed && applied !== null) {
    engine.written(applied);
    if (op === 'cancel') engine.stopLocal(cmd.runId, 'cancelled');
  }
  return outcome.result;
}

/** The revision check, then the transition: `applied` with its write, or `noop` when the state machine refuses. */
function decideRunCommand(
  run: RunRecord,
  op: RunOp,
  cmd: RunCommand,
  operation: string,
  now: number,
): { write: RunWrite | null; result: OperatorResult } {
  if (run.revision !== cmd.expectedRevision) {
    throw new DocketError(
      'REVISION_CONFLICT',
      `run ${cmd.runId} is at revision ${run.revision}, not ${cmd.expectedRevision}`,
      {
        operation,
        runId: cmd.runId,
        commandId: cmd.commandId,
        details: { revision: run.revision },
      },
    );
  }
  const detail: Json = { reason: cmd.reason, commandId: cmd.commandId };
  const decision = transition(
    run,
    op === 'cancel'
      ? { type: 'cancel', actor: 'operator', reason: 'OPERATOR_STOP', detail }
      : { type: op, actor: 'operator', detail },
    now,
  );
  if (!decision.ok) {
    return {
      write: null,
      result: { kind: 'noop', runId: run.runId, revision: run.revision, status: run.status, changed: false },
    };
  }
  const { revision, status } = decision.run;
  return {
    write: transitionWrite(decision),
    result: { kind: 'applied', runId: run.runId, revision, status, changed: true },
  };
}

/** A listed run: its `RunInfo` without `query` and `state` unless the listing asked for them. */
function listItem(run: ListedRun, callbacks: CallbackCounts, payloads: boolean): RunListItem {
  const item: RunListItem = toRunInfoWithoutPayloads(run, callbacks);
  if (payloads) {
    item.query = run.query;
    item.state = run.state ?? null;
  }
  return item;
}
