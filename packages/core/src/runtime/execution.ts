import * as v from 'valibot';
import {
  commitDecision,
  commitGate,
  holdsLease,
  plainCommitDecision,
  planModelCall,
} from '../machine/commit-policy.js';
import { copyRun, type RunRecord } from '../machine/run-types.js';
import { transitionWrite, writeOf } from '../machine/run-write.js';
import { type TransitionInput, transition } from '../machine/state-machine.js';
import type { PlanResult, RunWrite, TransactOptions, TransactPlan } from '../store/contract.js';
import { DocketError, isDocketError } from '../util/errors.js';
import { assertJson, deepFreeze, frozenCopy, JSON_STRUCTURE_LIMITS, type Json } from '../util/json.js';
import { isThenable, step } from '../util/thenable.js';
import { formatIssues } from '../util/validation.js';
import { abortError, type Engine, type InFlight, type RegisteredTask, type StopReason } from './engine.js';
import type { CheckResult, ControlOptions, PageControl } from './handlers.js';
import type { ModelProvider, ModelRequest } from './model.js';
import { PageContext } from './page-context.js';
import { type Outcome, PageFlight } from './page-flight.js';

/** The hint for plans that only decide a transition: the store may group them with others. */
const PURE: TransactOptions = Object.freeze({ pure: true });

interface Control extends PageControl {
  readonly kind: 'next' | 'end';
  readonly state: Json | null;
  readonly effect: ControlOptions<unknown>['effect'];
}

/** Writes one state-machine input for a run whose lease this page holds (or any input without a lease token). */
export async function settle(engine: Engine, runId: string, input: TransitionInput): Promise<RunRecord | null> {
  return engine.store
    .transact(
      engine.namespace,
      runId,
      (_tx, current) => {
        if (current === null) return { write: null, value: null };
        const decision = transition(current, input, engine.now());
        if (!decision.ok) return { write: null, value: null };
        const write = transitionWrite(decision);
        return { write, value: write };
      },
      PURE,
    )
    .then((write) => {
      engine.written(write);
      return write?.run ?? null;
    });
}

/**
 * Executes one claimed page of `run` to its settle: the claim-time check, the handler under its timeout, deadline,
 * heartbeat and signal, then the commit (re-checks, check at commit, effect, write) or the failure transition.
 * `callerSignal` is the signal of a `task.run` caller: its abort ends the run `CALLER_CANCELLED`. Not itself async:
 * a page whose handler ends synchronously goes from here to its settle (`settlePage`) with no async frame.
 */
export function executePage(
  engine: Engine,
  task: RegisteredTask,
  run: RunRecord,
  callerSignal?: AbortSignal,
): Promise<void> {
  try {
    const handlers = task.handlers;
    if (handlers === null) throw new Error('internal: executing a task without handlers');
    // `run` is this page's own copy, fresh from the store: freeze it in place rather than copy it again.
    const query = deepFreeze(run.query);
    const state = deepFreeze(run.state);
    if (handlers.check) return checkThenRun(engine, task, run, query, state, callerSignal);
    return runPage(engine, task, run, query, state, callerSignal);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The claim-time check in its own transaction; the page runs only if it passed and the lease is still held. */
async function checkThenRun(
  engine: Engine,
  task: RegisteredTask,
  run: RunRecord,
  query: Json,
  state: Json | null,
  callerSignal: AbortSignal | undefined,
): Promise<void> {
  const check = task.handlers?.check;
  if (check === undefined) throw new Error('internal: no check to run');
  const token = run.fence;
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
    await settleFailure(engine, run.runId, token, error, false);
    return;
  }
  if (verdict === 'blocked') engine.wake();
  if (verdict !== 'ok') return;
  await runPage(engine, task, run, query, state, callerSignal);
}

/** What a page's handler issued: its one control (`ctx.next` or `ctx.end`), and a second call's contract violation. */
class IssuedControl {
  control: Control | null = null;
  violation: string | null = null;

  constructor(private readonly runId: string) {}

  /** Records `ctx.next` or `ctx.end`, checking its options; a second call is a contract violation. */
  issue(kind: 'next' | 'end', nextState: Json | null, options: ControlOptions<unknown> | undefined): Control {
    const issued = this.control;
    if (issued !== null) {
      this.violation = `ctx.${kind} called after ctx.${issued.kind}: a page settles once`;
      throw new DocketError('HANDLER_CONTRACT_INVALID', this.violation, {
        operation: `ctx.${kind}`,
        runId: this.runId,
      });
    }
    if (options !== undefined && (typeof options !== 'object' || options === null)) {
      throw new DocketError('CONFIG_INVALID', `ctx.${kind} options must be an object`, { operation: `ctx.${kind}` });
    }
    if (options?.effect !== undefined && typeof options.effect !== 'function') {
      throw new DocketError('CONFIG_INVALID', 'effect must be a function', { operation: `ctx.${kind}` });
    }
    const control: Control = Object.freeze({ kind, state: nextState, effect: options?.effect });
    this.control = control;
    return control;
  }
}

/** Runs the handler of a page that may run: synchronously, then its settle now or once its outcome is known. */
function runPage(
  engine: Engine,
  task: RegisteredTask,
  run: RunRecord,
  query: Json,
  state: Json | null,
  callerSignal: AbortSignal | undefined,
): Promise<void> {
  const handlers = task.handlers;
  if (handlers === null) throw new Error('internal: executing a task without handlers');
  const token = run.fence;
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
      return issued.issue('next', committed, options);
    },
    (options) => issued.issue('end', run.state, options),
    (provider, request) => callModel(engine, run.runId, token, flight, provider, request),
    flight,
  );

  flight.run(handlers, ctx);
  // A handler that returned (or threw) synchronously has ended, and its outcome wins over any stop that could come
  // later: it gets no timers, and its settle starts now.
  const outcome = flight.result;
  if (outcome === null || onCallerAbort !== null) {
    return awaitOutcome(engine, task, run, flight, issued, callerSignal, onCallerAbort);
  }
  return settlePage(engine, task, run, outcome, issued);
}

/**
 * `settlePage` for the page most pages are: its handler returned its control, with no check at commit and no effect.
 * The commit is chained with `then` rather than awaited in an async function: a suspended async frame holds every
 * register of its function, and thousands of pages wait for their commit at once.
 */
function plainSettle(engine: Engine, run: RunRecord, control: Control): Promise<void> {
  const runId = run.runId;
  const token = run.fence;
  let committed: Promise<RunWrite | null>;
  try {
    committed = engine.store.transact(engine.namespace, runId, plainCommit(engine, token, control), PURE);
  } catch (error) {
    // A store that throws instead of rejecting still gets the failure path, which frees the slot.
    committed = Promise.reject(error);
  }
  return committed.then(
    (write) => {
      try {
        engine.written(write);
      } finally {
        endPage(engine, runId);
      }
    },
    (error: unknown) =>
      commitFailed(engine, runId, token, error).then(
        () => endPage(engine, runId),
        (failed: unknown) => {
          endPage(engine, runId);
          throw failed;
        },
      ),
  );
}

/** A page settled (or failed to): it is no longer in flight, and its slot is free. */
function endPage(engine: Engine, runId: string): void {
  engine.inflight.delete(runId);
  engine.slotFreed();
}

/** A page whose handler is still running: its timeout, deadline and heartbeat watch it until its outcome, then it settles. */
async function awaitOutcome(
  engine: Engine,
  task: RegisteredTask,
  run: RunRecord,
  flight: PageFlight,
  issued: IssuedControl,
  callerSignal: AbortSignal | undefined,
  onCallerAbort: (() => void) | null,
): Promise<void> {
  const timers = flight.result !== null ? null : startPageTimers(engine, run, run.fence);
  const outcome = flight.result ?? (await flight.outcome);
  if (timers !== null) stopPageTimers(timers);
  if (onCallerAbort) callerSignal?.removeEventListener('abort', onCallerAbort);
  await settlePage(engine, task, run, outcome, issued);
}

/**
 * Settles a page by its outcome, then frees its slot: a handler that returned its control with no commit-time check
 * and no effect (most pages) through `plainSettle`, any other outcome through `settleOther`.
 */
function settlePage(
  engine: Engine,
  task: RegisteredTask,
  run: RunRecord,
  outcome: Outcome,
  issued: IssuedControl,
): Promise<void> {
  const control = issued.control;
  if (
    control !== null &&
    issued.violation === null &&
    outcome.kind === 'returned' &&
    outcome.value === control &&
    task.handlers?.check === undefined &&
    control.effect === undefined
  ) {
    return plainSettle(engine, run, control);
  }
  return settleOther(engine, task, run, outcome, issued);
}

/** `settlePage` for a stop, a contract violation, a throw, or a commit with a commit-time check or an effect. */
async function settleOther(
  engine: Engine,
  task: RegisteredTask,
  run: RunRecord,
  outcome: Outcome,
  issued: IssuedControl,
): Promise<void> {
  const token = run.fence;
  const control = issued.control;
  try {
    if (outcome.kind === 'stopped') {
      await settleStop(engine, run.runId, token, outcome.reason);
    } else if (
      issued.violation !== null ||
      (outcome.kind === 'returned' && (control === null || outcome.value !== control))
    ) {
      const message =
        issued.violation ??
        (control === null
          ? 'execute must return ctx.next(...) or ctx.end(...)'
          : 'execute returned something other than the control object of this attempt');
      await settle(engine, run.runId, {
        type: 'contract_invalid',
        actor: engine.workerActor,
        leaseToken: token,
        error: engine.toRunError(new DocketError('HANDLER_CONTRACT_INVALID', message, { runId: run.runId })),
      });
    } else if (outcome.kind === 'threw') {
      await settleFailure(engine, run.runId, token, outcome.error, false);
    } else {
      await commit(engine, task, run, token, control as Control);
    }
  } finally {
    endPage(engine, run.runId);
  }
}

async function commit(engine: Engine, task: RegisteredTask, run: RunRecord, token: number, control: Control) {
  const actor = engine.workerActor;
  const allowAsync = engine.store.capabilities.asyncTransactions;
  const check = task.handlers?.check;
  try {
    const write = await engine.store.transact<RunWrite | null>(
      engine.namespace,
      run.runId,
      (tx, current) => {
        const now = engine.now();
        const gate = commitGate(current, token, actor, now);
        if (gate.kind === 'lost') return { write: null, value: null };
        if (gate.kind === 'deadline') return { write: gate.write, value: gate.write };
        const held = gate.run;
        const checked = check
          ? check({
              runId: run.runId,
              query: frozenCopy(held.query),
              state: frozenCopy(held.state),
              phase: 'commit',
              tx,
            })
          : ({ ok: true } as CheckResult);
        return step(checked, allowAsync, 'check', (result: CheckResult) => {
          const decided = commitDecision(held, token, actor, control, result, engine.checkDetail(result), now);
          if (decided.kind === 'blocked') return { write: decided.write, value: decided.write };
          return step(control.effect ? control.effect(tx) : undefined, allowAsync, 'effect', () => ({
            write: decided.write,
            value: decided.write,
          }));
        });
      },
      { pure: check === undefined && control.effect === undefined },
    );
    engine.written(write);
  } catch (error) {
    await commitFailed(engine, run.runId, token, error);
  }
}

/**
 * The plan of a commit with no commit-time check and no effect (`plainCommitDecision`), decided on the row the store
 * hands it. Pure, so the store may group it with others (or fold it into the claim's transaction).
 */
function plainCommit(engine: Engine, token: number, control: Control): TransactPlan<RunWrite | null, unknown> {
  return (_tx, current) => {
    const write = plainCommitDecision(current, token, engine.workerActor, control, engine.now());
    return { write, value: write };
  };
}

/** A commit that threw: a broken handler contract ends the run so, anything else is the page's failure. */
async function commitFailed(engine: Engine, runId: string, token: number, error: unknown): Promise<void> {
  if (isDocketError(error, 'HANDLER_CONTRACT_INVALID')) {
    await settle(engine, runId, {
      type: 'contract_invalid',
      actor: engine.workerActor,
      leaseToken: token,
      error: engine.toRunError(error),
    });
    return;
  }
  await settleFailure(engine, runId, token, error, false);
}

function decide(current: RunRecord, input: TransitionInput, now: number): RunWrite | null {
  const decision = transition(current, input, now);
  return writeOf(decision);
}

async function settleFailure(engine: Engine, runId: string, token: number, error: unknown, timedOut: boolean) {
  await settle(engine, runId, {
    type: 'settle_failure',
    actor: engine.workerActor,
    leaseToken: token,
    error: engine.toRunError(error),
    timedOut,
    random: Math.random(),
  });
}

async function settleStop(engine: Engine, runId: string, token: number, reason: StopReason): Promise<void> {
  const actor = engine.workerActor;
  switch (reason) {
    case 'timeout':
      return settleFailure(engine, runId, token, timeoutError(), true);
    case 'deadline':
      await settle(engine, runId, { type: 'cancel', actor, reason: 'DEADLINE', leaseToken: token });
      return;
    case 'caller':
      // A separate write that the caller's aborted signal does not reach.
      await settle(engine, runId, { type: 'cancel', actor, reason: 'CALLER_CANCELLED', leaseToken: token });
      return;
    case 'close':
      await settle(engine, runId, { type: 'release', actor, leaseToken: token });
      return;
    default:
      // cancelled, lease_lost, budget: another transition already ended this page.
      return;
  }
}

/** The timers of a page whose handler is running: its timeout, its deadline (if any) and its heartbeat. */
interface PageTimers {
  timeout: NodeJS.Timeout;
  deadline: NodeJS.Timeout | null;
  heartbeat: NodeJS.Timeout;
}

function startPageTimers(engine: Engine, run: RunRecord, token: number): PageTimers {
  // Timers get their arguments rather than closures: thousands of pages are in flight at once.
  return {
    timeout: setTimeout(stopPage, run.policy.timeoutMs, engine, run.runId, 'timeout'),
    deadline:
      run.deadlineAt === null
        ? null
        : setTimeout(stopPage, Math.max(0, run.deadlineAt - engine.now()), engine, run.runId, 'deadline'),
    heartbeat: setInterval(renewLease, engine.options.protocol.heartbeatMs, engine, run.runId, token),
  };
}

function stopPageTimers(timers: PageTimers): void {
  clearTimeout(timers.timeout);
  if (timers.deadline !== null) clearTimeout(timers.deadline);
  clearInterval(timers.heartbeat);
}

/** Stops this process's page of `runId` (a timer's callback). */
function stopPage(engine: Engine, runId: string, reason: StopReason): void {
  engine.stopLocal(runId, reason);
}

/** Renews the lease of a page in flight (the heartbeat); a failure is left to the next beat. */
async function renewLease(engine: Engine, runId: string, token: number): Promise<void> {
  try {
    const held = await engine.store.transact(
      engine.namespace,
      runId,
      (_tx, current) => {
        if (!holdsLease(current, token) || current.lease === null) {
          return { write: null, value: current?.status === 'cancelled' ? ('cancelled' as const) : ('lost' as const) };
        }
        const run = copyRun(current);
        run.lease = { ...current.lease, expiresAt: engine.now() + engine.options.protocol.leaseMs };
        return { write: { run, history: [], events: [] }, value: 'held' as const };
      },
      PURE,
    );
    if (held === 'cancelled') engine.stopLocal(runId, 'cancelled');
    else if (held === 'lost') engine.stopLocal(runId, 'lease_lost');
  } catch {
    // A failed renewal is retried at the next beat; if the store stays down the lease expires and recovery runs.
  }
}

function validateState(engine: Engine, task: RegisteredTask, value: unknown, runId: string): Json {
  assertJson(value, 'state', { bytes: engine.options.limits.stateBytes, ...JSON_STRUCTURE_LIMITS }, 'ctx.next');
  const schema = task.definition.schema.state;
  if (schema) {
    const parsed = v.safeParse(schema, value);
    if (!parsed.success) {
      throw new DocketError('JSON_INVALID', 'state does not match schema.state', {
        operation: 'ctx.next',
        runId,
        details: { issues: formatIssues(parsed.issues) },
      });
    }
  }
  return value;
}

async function callModel(
  engine: Engine,
  runId: string,
  token: number,
  flight: InFlight,
  provider: ModelProvider,
  request: ModelRequest,
) {
  if (flight.signal().aborted) throw flight.signal().reason;
  const verdict = await engine.store.transact(
    engine.namespace,
    runId,
    (_tx, current) => {
      const planned = planModelCall(current, token, engine.workerActor, engine.now());
      return { write: planned.kind === 'lost' ? null : planned.write, value: planned };
    },
    PURE,
  );
  if (verdict.kind === 'exhausted') {
    engine.written(verdict.write);
    engine.stopLocal(runId, 'budget');
    throw abortError('budget');
  }
  if (verdict.kind === 'lost') {
    engine.stopLocal(runId, 'lease_lost');
    throw abortError('lease_lost');
  }
  const response = provider.generate({ ...request, signal: flight.signal() });
  if (!isThenable(response)) throw new DocketError('CONFIG_INVALID', 'provider.generate must return a promise');
  return response;
}

function timeoutError(): Error {
  const error = new Error('the attempt exceeded its timeoutMs');
  error.name = 'TimeoutError';
  (error as Error & { code: string }).code = 'ATTEMPT_TIMEOUT';
  return error;
}
