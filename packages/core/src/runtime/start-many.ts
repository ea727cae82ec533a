import type { CreateRunsResult } from '../store/contract.js';
import { DocketError, isDocketError } from '../util/errors.js';
import type { ResolvedDefinition } from './definition.js';
import type { Engine } from './engine.js';
import { type PreparedStart, prepareStart } from './start.js';

/** The most inputs one `startMany` takes. */
export const MAX_START_MANY = 1000;

/** The same error with `details.index` added: which input of a bulk start it is about. */
function atIndex(error: DocketError, index: number): DocketError {
  return new DocketError(error.code, `inputs[${index}]: ${error.message}`, {
    operation: error.operation,
    retryable: error.retryable,
    ...(error.runId === undefined ? {} : { runId: error.runId }),
    ...(error.idempotencyKey === undefined ? {} : { idempotencyKey: error.idempotencyKey }),
    details: { ...error.details, index },
    cause: error.cause,
  });
}

/** Checks every input as `start` would; the first bad one throws its error with `details.index`. */
function prepareAll(engine: Engine, def: ResolvedDefinition, inputs: unknown, operation: string): PreparedStart[] {
  if (!Array.isArray(inputs) || inputs.length === 0 || inputs.length > MAX_START_MANY) {
    throw new DocketError('CONFIG_INVALID', `startMany takes an array of 1..${MAX_START_MANY} inputs`, {
      operation,
      details: { length: Array.isArray(inputs) ? inputs.length : null },
    });
  }
  return inputs.map((input, index) => {
    try {
      return prepareStart(engine, def, input, operation);
    } catch (error) {
      throw isDocketError(error) ? atIndex(error, index) : error;
    }
  });
}

/** `CAPACITY_EXCEEDED` or `IDEMPOTENCY_CONFLICT` for the whole call, or the answers in input order. */
function answers(engine: Engine, result: CreateRunsResult, prepared: PreparedStart[], operation: string) {
  if (result.kind === 'capacity') {
    throw new DocketError('CAPACITY_EXCEEDED', `these runs would pass limits.maxRuns live runs`, {
      operation,
      details: { maxRuns: engine.options.limits.maxRuns, count: prepared.length },
    });
  }
  if (result.kind === 'conflict') {
    const key = prepared[result.index]?.run.idempotencyKey ?? undefined;
    throw new DocketError(
      'IDEMPOTENCY_CONFLICT',
      `inputs[${result.index}]: this idempotency key is used by a run with another input`,
      {
        operation,
        runId: result.runId,
        ...(key === undefined ? {} : { idempotencyKey: key }),
        details: { index: result.index },
      },
    );
  }
  return result.answers;
}

/**
 * `task.startMany` after the queue's guards: every input checked as `start` checks it, then all written in one
 * transaction or none (`createRuns`); the answers are in input order.
 */
export async function startManyRuns(
  engine: Engine,
  def: ResolvedDefinition,
  inputs: unknown,
): Promise<{ runId: string; created: boolean }[]> {
  const operation = 'task.startMany';
  const prepared = prepareAll(engine, def, inputs, operation);
  for (const { run } of prepared) engine.starts(run.runId);
  let result: CreateRunsResult;
  try {
    result = await engine.store.createRuns({
      runs: prepared.map(({ run, history }) => ({ run, history })),
      maxRuns: engine.options.limits.maxRuns,
    });
  } catch (error) {
    for (const { run } of prepared) engine.started(run.runId, null);
    throw error;
  }
  const inserted = new Set(result.kind === 'ok' ? result.insert : []);
  for (const [index, { run, history }] of prepared.entries()) {
    engine.started(run.runId, inserted.has(index) ? { run, history: [history], events: [] } : null);
    if (inserted.has(index) && run.status === 'waiting' && run.dueAt !== null) engine.wakeAtTime(run.dueAt);
  }
  return answers(engine, result, prepared, operation);
}
