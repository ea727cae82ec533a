import { classifyRetry } from '../machine/retry-class.js';
import type { RunRecord } from '../machine/run-types.js';
import { transitionWrite } from '../machine/run-write.js';
import { type TransitionInput, transition } from '../machine/state-machine.js';
import type { TransactOptions } from '../store/contract.js';
import { isDocketError } from '../util/errors.js';
import type { Engine, StopReason } from './engine.js';

/** The hint for plans that only decide a transition: the store may group them with others. */
export const PURE: TransactOptions = Object.freeze({ pure: true });

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

/** Codes of a store that failed (not the application's effect or check): the page's work is not to blame. */
const STORE_FAILURES = new Set(['STORAGE_FAILURE', 'CONNECTION_UNAVAILABLE', 'OUTCOME_UNKNOWN']);

/**
 * A commit that threw: a broken handler contract ends the run so; a store failure or a lost connection consumes no
 * attempt (the page keeps its lease, which expires, and the run is recovered as after a crash); anything else is the
 * page's failure.
 */
export async function commitFailed(engine: Engine, runId: string, token: number, error: unknown): Promise<void> {
  if (isDocketError(error) && STORE_FAILURES.has(error.code)) {
    engine.storeFailedAtCommit(runId, error);
    return;
  }
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

/**
 * Settles a page that threw or timed out: its failure, retried with backoff until its attempts run out, at once
 * `failed` when the error is final, and not before its `retryAfterMs` when it asks for one (`classifyRetry`).
 */
export async function settleFailure(engine: Engine, runId: string, token: number, error: unknown, timedOut: boolean) {
  const retry = classifyRetry(error);
  await settle(engine, runId, {
    type: 'settle_failure',
    actor: engine.workerActor,
    leaseToken: token,
    error: engine.toRunError(error),
    timedOut,
    random: Math.random(),
    final: retry.nonRetryable,
    retryAfterMs: retry.retryAfterMs,
  });
}

/** Settles a page that was stopped before it returned, by why it was stopped. */
export async function settleStop(engine: Engine, runId: string, token: number, reason: StopReason): Promise<void> {
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

/** The error a timed-out attempt is recorded with (`ATTEMPT_TIMEOUT`). */
function timeoutError(): Error {
  const error = new Error('the attempt exceeded its timeoutMs');
  error.name = 'TimeoutError';
  (error as Error & { code: string }).code = 'ATTEMPT_TIMEOUT';
  return error;
}
