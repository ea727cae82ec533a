import * as v from 'valibot';
import type { CreateRunResult, CreateRunsResult } from '../../store/contract.js';
import { DocketError, isDocketError } from '../../util/errors.js';
import { strictObject } from '../../util/validation.js';
import type { Engine } from '../queue/engine.js';
import type { ResolvedDefinition } from './definition.js';
import { type PreparedStart, prepareStart, startAnswer } from './start-input.js';

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
function prepareAll(
  engine: Engine,
  def: ResolvedDefinition,
  inputs: unknown,
  operation: string,
  traceParent: string | null,
): PreparedStart[] {
  if (!Array.isArray(inputs) || inputs.length === 0 || inputs.length > MAX_START_MANY) {
    throw new DocketError('CONFIG_INVALID', `startMany takes an array of 1..${MAX_START_MANY} inputs`, {
      operation,
      details: { length: Array.isArray(inputs) ? inputs.length : null },
    });
  }
  // A hole is no input: `map` would skip it and leave one in the answer.
  for (let index = 0; index < inputs.length; index++) {
    if (!(index in inputs)) {
      throw new DocketError('CONFIG_INVALID', `inputs[${index}]: startMany takes no holes in its array`, {
        operation,
        details: { index },
      });
    }
  }
  return inputs.map((input, index) => {
    try {
      return prepareStart(engine, def, input, operation, traceParent);
    } catch (error) {
      throw isDocketError(error) ? atIndex(error, index) : error;
    }
  });
}

/** What `start` and `startMany` take beside their inputs. */
export interface StartOptions {
  /**
   * The application's own open transaction on the store's database: the runs are written in it and exist only if
   * it commits (SQLite: a drizzle `db.transaction` handle or the better-sqlite3 `Database` while its transaction
   * runs, written synchronously within the call; PostgreSQL: a drizzle node-postgres transaction or a `pg` client
   * inside `BEGIN`). Another database's transaction is `CONFIG_INVALID`.
   */
  tx?: unknown;
}

const optionsSchema = strictObject({ tx: v.optional(v.unknown()) });

/** Checks `start`/`startMany` options; anything but `{ tx? }` is `CONFIG_INVALID`. */
export function parseStartOptions(options: unknown, operation: string): StartOptions {
  const parsed = v.safeParse(optionsSchema, options ?? {});
  if (!parsed.success) {
    throw new DocketError('CONFIG_INVALID', `invalid ${operation} options: only tx is taken`, { operation });
  }
  return parsed.output;
}

/** `CAPACITY_EXCEEDED` or `IDEMPOTENCY_CONFLICT` for the whole call, or the answers in input order. */
function answers(
  engine: Engine,
  result: CreateRunsResult,
  prepared: PreparedStart[],
  operation: string,
  many: boolean,
) {
  const at = (index: number) => (many ? `inputs[${index}]: ` : '');
  if (result.kind === 'capacity') {
    throw new DocketError(
      'CAPACITY_EXCEEDED',
      `${many ? 'these runs' : 'this run'} would pass limits.maxRuns live runs`,
      {
        operation,
        details: { maxRuns: engine.options.limits.maxRuns, count: prepared.length },
      },
    );
  }
  if (result.kind === 'conflict') {
    const key = prepared[result.index]?.run.idempotencyKey ?? undefined;
    throw new DocketError(
      'IDEMPOTENCY_CONFLICT',
      `${at(result.index)}this idempotency key is used by a run with another input`,
      {
        operation,
        runId: result.runId,
        ...(key === undefined ? {} : { idempotencyKey: key }),
        ...(many ? { details: { index: result.index } } : {}),
      },
    );
  }
  return result.answers;
}

/**
 * Writes checked starts in one transaction (`createRuns`), or in the application's `tx`, reporting them to telemetry,
 * and answers in input order. With `tx` on a store whose transactions are synchronous (SQLite), the workers of this
 * process are woken once the application's transaction has ended, if the runs are there (it committed).
 */
async function createAll(
  engine: Engine,
  prepared: PreparedStart[],
  options: StartOptions,
  operation: string,
  many: boolean,
): Promise<{ runId: string; created: boolean }[]> {
  for (const { run } of prepared) engine.starts(run.runId);
  let result: CreateRunsResult;
  try {
    result = await engine.store.createRuns({
      runs: prepared.map(({ run, history }) => ({ run, history })),
      maxRuns: engine.options.limits.maxRuns,
      ...(options.tx === undefined ? {} : { tx: options.tx }),
    });
  } catch (error) {
    for (const { run } of prepared) engine.started(run.runId, null);
    throw error;
  }
  const inserted = new Set(result.kind === 'ok' ? result.insert : []);
  for (const [index, { run, history }] of prepared.entries()) {
    engine.started(
      run.runId,
      inserted.has(index) && options.tx === undefined ? { run, history: [history], events: [] } : null,
    );
    if (inserted.has(index) && run.status === 'waiting' && run.dueAt !== null) engine.wakeAtTime(run.dueAt);
  }
  const first = prepared[[...inserted][0] ?? -1]?.run;
  if (options.tx !== undefined && first !== undefined) wakeAfterCommit(engine, first.runId);
  return answers(engine, result, prepared, operation, many);
}

/** After an application transaction of a synchronous store: wakes the workers if the transaction committed. */
function wakeAfterCommit(engine: Engine, runId: string): void {
  if (engine.store.capabilities.asyncTransactions) return; // PostgreSQL: the NOTIFY is delivered at commit
  setImmediate(() => {
    engine.store.getRun(engine.namespace, runId).then(
      (run) => {
        if (run !== null) engine.wake();
      },
      () => undefined,
    );
  });
}

/**
 * `task.startMany` after the queue's guards: every input checked as `start` checks it, then all written in one
 * transaction or none (`createRuns`); the answers are in input order.
 */
export async function startManyRuns(
  engine: Engine,
  def: ResolvedDefinition,
  inputs: unknown,
  options?: unknown,
): Promise<{ runId: string; created: boolean }[]> {
  const operation = 'task.startMany';
  const count = Array.isArray(inputs) ? inputs.length : 0;
  return traceStart(
    engine,
    def,
    count,
    async (traceParent) => {
      const parsed = parseStartOptions(options, operation);
      const prepared = prepareAll(engine, def, inputs, operation, traceParent);
      return createAll(engine, prepared, parsed, operation, true);
    },
    (answers) => answers.filter((answer) => answer.created).length,
  );
}

/** `task.start(input, { tx })`: one start written in the application's transaction. */
export async function startInTransaction(
  engine: Engine,
  def: ResolvedDefinition,
  input: unknown,
  options: StartOptions,
  traceParent: string | null,
): Promise<{ runId: string; created: boolean }> {
  const operation = 'task.start';
  const prepared = [prepareStart(engine, def, input, operation, traceParent)];
  const [answer] = await createAll(engine, prepared, options, operation, false);
  return answer as { runId: string; created: boolean };
}

/** `task.start` after the queue's guards: prepare, create (reporting the start to telemetry in order), answer. */
export async function startRun(
  engine: Engine,
  def: ResolvedDefinition,
  input: unknown,
  options?: unknown,
): Promise<{ runId: string; created: boolean }> {
  if (!engine.tracing.enabled) return startOne(engine, def, input, options, null);
  return traceStart(
    engine,
    def,
    1,
    (traceParent) => startOne(engine, def, input, options, traceParent),
    (answer) => (answer.created ? 1 : 0),
  );
}

/**
 * Runs a start call's `body` inside its span (when a tracer gives one), ending the span with the number of runs it
 * created or the error it threw.
 */
function traceStart<T>(
  engine: Engine,
  def: ResolvedDefinition,
  count: number,
  body: (traceParent: string | null) => Promise<T>,
  created: (answer: T) => number,
): Promise<T> {
  const span = engine.tracing.startSpan(def, count);
  if (span === null) return body(null);
  return body(span.traceParent).then(
    (answer) => {
      engine.tracing.endStart(span, { created: created(answer) });
      return answer;
    },
    (error: unknown) => {
      engine.tracing.endStart(span, { error });
      throw error;
    },
  );
}

/** One start: checked, written (in the application's `tx` when given), answered. */
async function startOne(
  engine: Engine,
  def: ResolvedDefinition,
  input: unknown,
  options: unknown,
  traceParent: string | null,
): Promise<{ runId: string; created: boolean }> {
  const operation = 'task.start';
  const parsed = parseStartOptions(options, operation);
  if (parsed.tx !== undefined) return startInTransaction(engine, def, input, parsed, traceParent);
  const prepared = prepareStart(engine, def, input, operation, traceParent);
  const { run, history } = prepared;
  engine.starts(run.runId);
  let result: CreateRunResult;
  try {
    result = await engine.store.createRun({ run, history, maxRuns: engine.options.limits.maxRuns });
  } catch (error) {
    engine.started(run.runId, null);
    throw error;
  }
  engine.started(run.runId, result.kind === 'created' ? { run, history: [history], events: [] } : null);
  return startAnswer(engine, prepared, result, operation);
}
