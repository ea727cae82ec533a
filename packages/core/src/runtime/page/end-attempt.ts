import { DEFAULT_GROUP } from '../../machine/flow.js';
import { classifyRetry } from '../../machine/retry-class.js';
import { isDocketError } from '../../util/errors.js';
import type { Engine, StopReason } from '../queue/engine.js';
import { writeTransition } from '../queue/write-transition.js';

/** Codes of a store that failed (not the application's effect or check): the page's work is not to blame. */
const STORE_FAILURES = new Set(['STORAGE_FAILURE', 'CONNECTION_UNAVAILABLE', 'OUTCOME_UNKNOWN']);

/**
 * A commit that threw: a broken handler contract (or a child key already taken) ends the run so; a store failure or a lost connection consumes no
 * attempt (the page keeps its lease, which expires, and the run is recovered as after a crash); anything else is the
 * page's failure.
 */
export async function commitFailed(engine: Engine, runId: string, token: number, error: unknown): Promise<void> {
  if (isDocketError(error) && STORE_FAILURES.has(error.code)) {
    engine.storeFailedAtCommit(runId, error);
    return;
  }
  // A child's idempotency key that names another run: the handler's mistake, which no attempt gets past.
  if (isDocketError(error, 'HANDLER_CONTRACT_INVALID') || isDocketError(error, 'IDEMPOTENCY_CONFLICT')) {
    await writeTransition(engine, runId, {
      type: 'contract_invalid',
      actor: engine.workerActor,
      leaseToken: token,
      error: engine.toRunError(error),
    });
    return;
  }
  await failAttempt(engine, runId, token, error, false);
}

/**
 * Ends an attempt that threw or timed out: its failure, retried with backoff until its attempts run out, at once
 * `failed` when the error is final, and not before its `retryAfterMs` when it asks for one (`classifyRetry`).
 */
export async function failAttempt(engine: Engine, runId: string, token: number, error: unknown, timedOut: boolean) {
  const retry = classifyRetry(error);
  const input = {
    type: 'attempt_failed',
    actor: engine.workerActor,
    leaseToken: token,
    error: engine.toRunError(error),
    timedOut,
    random: Math.random(),
    final: retry.nonRetryable,
    retryAfterMs: retry.retryAfterMs,
    hold: retry.hold,
  } as const;
  if (retry.hold === 'run' || retry.retryAfterMs === null) {
    await writeTransition(engine, runId, input);
    return;
  }
  const until = engine.now() + retry.retryAfterMs;
  await writeTransition(engine, runId, input, (run) => ({
    scope: retry.hold === 'task' ? 'task' : 'group',
    group: run.group ?? DEFAULT_GROUP,
    until,
  }));
}

/** Ends an attempt that was stopped before it returned, by why it was stopped. */
export async function endStoppedAttempt(
  engine: Engine,
  runId: string,
  token: number,
  reason: StopReason,
): Promise<void> {
  const actor = engine.workerActor;
  switch (reason) {
    case 'timeout':
      return failAttempt(engine, runId, token, timeoutError(), true);
    case 'deadline':
      await writeTransition(engine, runId, { type: 'cancel', actor, reason: 'DEADLINE', leaseToken: token });
      return;
    case 'caller':
      // A separate write that the caller's aborted signal does not reach.
      await writeTransition(engine, runId, { type: 'cancel', actor, reason: 'CALLER_CANCELLED', leaseToken: token });
      return;
    case 'close':
      await writeTransition(engine, runId, { type: 'release', actor, leaseToken: token });
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
