import { commitDecision, commitGate, plainCommitDecision } from '../../machine/commit-policy.js';
import type { RunRecord } from '../../machine/run-types.js';
import type { RunWrite, TransactPlan } from '../../store/contract.js';
import { DocketError } from '../../util/errors.js';
import { frozenCopy } from '../../util/json.js';
import { step } from '../../util/thenable.js';
import type { Engine } from '../queue/engine.js';
import { PURE, writeTransition } from '../queue/write-transition.js';
import type { CheckResult } from '../task/handlers.js';
import { commitFailed, endStoppedAttempt, failAttempt } from './end-attempt.js';
import type { Outcome } from './flight.js';
import type { Control, IssuedControl, Page } from './page.js';

/**
 * `commitPage` for the page most pages are: its handler returned its control, with no check at commit and no effect.
 * The commit is chained with `then` rather than awaited in an async function: a suspended async frame holds every
 * register of its function, and thousands of pages wait for their commit at once.
 */
function commitPlain(engine: Engine, run: RunRecord, control: Control): Promise<void> {
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
        engine.commitSucceeded();
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

/**
 * A page settled (or failed to): it is no longer in flight. Its slot is free now, or, when its handler ignored a stop
 * and still runs, once that handler settles (`engine.straggling` counts such pages meanwhile).
 */
export function endPage(engine: Engine, runId: string): void {
  const flight = engine.inflight.get(runId);
  engine.inflight.delete(runId);
  if (flight === undefined || flight.handlerSettled) {
    engine.slotFreed();
    return;
  }
  engine.stragglerStarted();
  flight.onHandlerSettled = () => engine.stragglerEnded();
}

/**
 * Settles a page by its outcome, then frees its slot: a handler that returned its control with no commit-time check
 * and no effect (most pages) through `commitPlain`, any other outcome through `commitOther`.
 */
export function commitPage(page: Page, outcome: Outcome, issued: IssuedControl): Promise<void> {
  const control = issued.control;
  if (
    control !== null &&
    issued.violation === null &&
    outcome.kind === 'returned' &&
    outcome.value === control &&
    page.task.handlers?.check === undefined &&
    control.effect === undefined
  ) {
    return commitPlain(page.engine, page.run, control);
  }
  return commitOther(page, outcome, issued);
}

/** `commitPage` for a stop, a contract violation, a throw, or a commit with a commit-time check or an effect. */
async function commitOther(page: Page, outcome: Outcome, issued: IssuedControl): Promise<void> {
  const { engine, run, token } = page;
  const control = issued.control;
  try {
    if (outcome.kind === 'stopped') {
      await endStoppedAttempt(engine, run.runId, token, outcome.reason);
    } else if (
      issued.violation !== null ||
      (outcome.kind === 'returned' && (control === null || outcome.value !== control))
    ) {
      const message =
        issued.violation ??
        (control === null
          ? 'execute must return ctx.next(...) or ctx.end(...)'
          : 'execute returned something other than the control object of this attempt');
      await writeTransition(engine, run.runId, {
        type: 'contract_invalid',
        actor: engine.workerActor,
        leaseToken: token,
        error: engine.toRunError(new DocketError('HANDLER_CONTRACT_INVALID', message, { runId: run.runId })),
      });
    } else if (outcome.kind === 'threw') {
      await failAttempt(engine, run.runId, token, outcome.error, false);
    } else {
      await commit(page, control as Control);
    }
  } finally {
    endPage(engine, run.runId);
  }
}

/** The commit of a page with a commit-time check or an effect: gate, check, effect and write in one transaction. */
async function commit(page: Page, control: Control): Promise<void> {
  const { engine, task, run, token } = page;
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
    engine.commitSucceeded();
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
