import * as v from 'valibot';
import type { RunRecord } from '../../machine/run-types.js';
import { writeOf } from '../../machine/run-write.js';
import { holdsLease, type TransitionInput, transition } from '../../machine/state-machine.js';
import type { PlanResult, RunWrite } from '../../store/contract.js';
import { DocketError } from '../../util/errors.js';
import { deepFreeze, JSON_STRUCTURE_LIMITS, type Json, jsonSnapshot } from '../../util/json.js';
import { step } from '../../util/thenable.js';
import { formatIssues } from '../../util/validation.js';
import type { Engine, RegisteredTask } from '../queue/engine.js';
import type { CheckResult } from '../task/handlers.js';
import { type ChildOutcome, childrenOf, prepareChildren, seesChildren } from './children.js';
import { commitPage } from './commit.js';
import { PageContext } from './context.js';
import { failAttempt } from './end-attempt.js';
import { PageFlight } from './flight.js';
import { callModel } from './model-call.js';
import { IssuedControl, type Page } from './page.js';
import { startPageTimers, stopPage, stopPageTimers } from './timers.js';

/**
 * Executes one claimed page of `run` to its commit: the claim-time check, the handler under its timeout, deadline,
 * heartbeat and signal, then the commit (re-checks, check at commit, effect, write) or the failure transition.
 * `callerSignal` is the signal of a `task.run` caller: its abort ends the run `CALLER_CANCELLED`. Not itself async:
 * a page whose handler ends synchronously goes from here to its commit (`commitPage`) with no async frame.
 */
export function executePage(
  engine: Engine,
  task: RegisteredTask,
  run: RunRecord,
  callerSignal?: AbortSignal,
): Promise<void> {
  if (!engine.tracing.enabled) return executeUntraced(engine, task, run, callerSignal);
  const page = engine.tracing.pageStarted(run);
  return executeUntraced(engine, task, run, callerSignal).finally(() => engine.tracing.pageEnded(run.runId, page));
}

/** `executePage` without its span. */
function executeUntraced(
  engine: Engine,
  task: RegisteredTask,
  run: RunRecord,
  callerSignal: AbortSignal | undefined,
): Promise<void> {
  try {
    const handlers = task.handlers;
    if (handlers === null) throw new Error('internal: executing a task without handlers');
    // `run` is this page's own copy, fresh from the store: freeze it in place rather than copy it again.
    const page: Page = {
      engine,
      task,
      run,
      token: run.fence,
      query: deepFreeze(run.query),
      state: deepFreeze(run.state),
      callerSignal,
      children: NO_CHILDREN,
    };
    if (seesChildren(run)) return withChildren(page);
    if (handlers.check) return checkThenRun(page);
    return runPage(page);
  } catch (error) {
    return Promise.reject(error);
  }
}

const NO_CHILDREN: readonly ChildOutcome[] = Object.freeze([]);

/** A page after one that started children: their outcomes read first (`ctx.children`); a failed read fails the attempt. */
async function withChildren(page: Page): Promise<void> {
  try {
    page.children = await childrenOf(page.engine, page.run);
  } catch (error) {
    await failAttempt(page.engine, page.run.runId, page.token, error, false);
    return;
  }
  if (page.task.handlers?.check) return checkThenRun(page);
  return runPage(page);
}

/** The claim-time check in its own transaction; the page runs only if it passed and the lease is still held. */
async function checkThenRun(page: Page): Promise<void> {
  const { engine, run, token, query, state } = page;
  const check = page.task.handlers?.check;
  if (check === undefined) throw new Error('internal: no check to run');
  const actor = engine.workerActor;
  const allowAsync = engine.store.capabilities.asyncTransactions;
  let verdict: 'ok' | 'blocked' | 'lost';
  try {
    verdict = await engine.store.transact(engine.namespace, run.runId, (tx, current) => {
      if (!holdsLease(current, token)) return { write: null, value: 'lost' as const };
      return step(
        check({ runId: run.runId, query, state, phase: 'claim', tx }),
        allowAsync,
        'check',
        (result: CheckResult): PlanResult<'ok' | 'blocked' | 'lost'> => {
          if (result?.ok === true) return { write: null, value: 'ok' };
          const write = decide(
            current,
            {
              type: 'check_failed',
              actor,
              phase: 'claim',
              leaseToken: token,
              detail: engine.checkDetail(result),
            },
            engine.now(),
          );
          return { write, value: 'blocked' };
        },
      );
    });
  } catch (error) {
    await failAttempt(engine, run.runId, token, error, false);
    return;
  }
  if (verdict === 'blocked') engine.wake();
  if (verdict !== 'ok') return;
  await runPage(page);
}

/** Runs the handler of a page that may run: synchronously, then its commit now or once its outcome is known. */
function runPage(page: Page): Promise<void> {
  const { engine, task, run, token, query, state, callerSignal } = page;
  const handlers = task.handlers;
  if (handlers === null) throw new Error('internal: executing a task without handlers');
  const flight = new PageFlight(run.runId, token);
  engine.inflight.set(run.runId, flight);

  const onCallerAbort = callerSignal ? () => stopPage(engine, run.runId, 'caller') : null;
  if (callerSignal && onCallerAbort) {
    if (callerSignal.aborted) onCallerAbort();
    else callerSignal.addEventListener('abort', onCallerAbort, { once: true });
  }

  const issued = new IssuedControl(run.runId);
  const ctx = new PageContext(
    run.runId,
    query,
    state,
    run.page,
    run.pageFailures + 1,
    (nextState, options) => {
      const committed = nextState === undefined ? run.state : validateState(engine, task, nextState, run.runId);
      return issued.issue('next', committed, options, (children, childFailure) =>
        prepareChildren(engine, run, children, childFailure),
      );
    },
    (options) => issued.issue('end', run.state, options),
    (provider, request) => callModel(engine, run.runId, token, flight, provider, request),
    flight,
    page.children,
  );

  if (engine.tracing.enabled) engine.tracing.around(run.runId, () => flight.run(handlers, ctx));
  else flight.run(handlers, ctx);
  // A handler that returned (or threw) synchronously has ended, and its outcome wins over any stop that could come
  // later: it gets no timers, and its commit starts now.
  const outcome = flight.result;
  if (outcome === null || onCallerAbort !== null) {
    return awaitOutcome(page, flight, issued, onCallerAbort);
  }
  return commitPage(page, outcome, issued);
}

/** A page whose handler is still running: its timeout, deadline and heartbeat watch it until its outcome, then it commits. */
async function awaitOutcome(
  page: Page,
  flight: PageFlight,
  issued: IssuedControl,
  onCallerAbort: (() => void) | null,
): Promise<void> {
  const timers = flight.result !== null ? null : startPageTimers(page.engine, page.run, page.token);
  const outcome = flight.result ?? (await flight.outcome);
  if (timers !== null) stopPageTimers(timers);
  if (onCallerAbort) page.callerSignal?.removeEventListener('abort', onCallerAbort);
  await commitPage(page, outcome, issued);
}

/** Checks a state given to `ctx.next` against the JSON limits and `schema.state`. */
function validateState(engine: Engine, task: RegisteredTask, value: unknown, runId: string): Json {
  const state = jsonSnapshot(
    value,
    'state',
    { bytes: engine.options.limits.stateBytes, ...JSON_STRUCTURE_LIMITS },
    'ctx.next',
  );
  const schema = task.definition.schema.state;
  if (schema) {
    const parsed = v.safeParse(schema, state);
    if (!parsed.success) {
      throw new DocketError('JSON_INVALID', 'state does not match schema.state', {
        operation: 'ctx.next',
        runId,
        details: { issues: formatIssues(parsed.issues) },
      });
    }
  }
  return state;
}

/** The write of one transition input, or `null` when refused. */
function decide(current: RunRecord, input: TransitionInput, now: number): RunWrite | null {
  const decision = transition(current, input, now);
  return writeOf(decision);
}
