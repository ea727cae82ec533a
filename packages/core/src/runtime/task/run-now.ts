import { planClaim } from '../../machine/claim-policy.js';
import { isExplicitlyClaimableAt } from '../../machine/claimable.js';
import { isTerminal, type RunInfo, type RunRecord } from '../../machine/run-types.js';
import { recheckable } from '../../machine/state-machine.js';
import type { RunWrite } from '../../store/contract.js';
import { DocketError } from '../../util/errors.js';
import { sleepCancellable } from '../../util/sleep.js';
import { executePage } from '../page/execute.js';
import type { Engine } from '../queue/engine.js';
import { writeTransition } from '../queue/write-transition.js';
import type { RunOptions, TaskScope } from './task-scope.js';

/**
 * `task.run`: executes the run in this process now. Waits up to `waitMs` for it to be claimable, claims it (one of
 * several callers wins), executes pages until it is terminal, blocked, waiting or paused, and answers its RunInfo.
 */
export async function runNow<Q, S>(
  scope: TaskScope<Q, S>,
  runId: string,
  options: unknown = {},
): Promise<RunInfo<Q, S> | null> {
  const { engine, registered, guards, workers, load, info } = scope;
  const operation = 'task.run';
  guards.assertUsable(operation);
  if (guards.mode() === 'producer') {
    throw new DocketError('MODE_OPERATION_NOT_ALLOWED', 'a producer queue cannot execute runs', { operation });
  }
  const { waitMs, signal } = parseRunOptions(options, operation);
  if (!registered.handlers) throw new DocketError('MODE_OPERATION_NOT_ALLOWED', 'task has no handlers', { operation });
  const windowEnd = Date.now() + waitMs;
  const { pollMs } = engine.options.protocol;
  for (;;) {
    let current = await load(runId, operation);
    if (!current) return null;
    if (isTerminal(current.status) || current.status === 'paused' || current.status === 'pausing') return info(current);
    if (signal?.aborted) {
      current =
        (await writeTransition(engine, runId, { type: 'cancel', actor: 'producer', reason: 'CALLER_CANCELLED' })) ??
        current;
      engine.stopLocal(runId, 'cancelled');
      return info(current);
    }
    if (current.status === 'running' && current.lease !== null && current.lease.expiresAt <= engine.now()) {
      // Its worker died: recover it here rather than wait for a sweep (a restarted one-shot consumer relies on it).
      await writeTransition(engine, runId, {
        type: 'lease_expired',
        actor: engine.workerActor,
        recoveryLimit: engine.options.protocol.recoveryLimit,
      });
      continue;
    }
    if (current.status === 'running') return info(current);
    // Blocked by recovery: a person checks the business effect first, then resumes or cancels.
    if (current.status === 'blocked' && !recheckable(current)) return info(current);
    const now = engine.now();
    if (isExplicitlyClaimableAt(current, now)) {
      const write = await claimExplicitly(engine, runId);
      if (write === null || write.run.status !== 'running') {
        if (write === null) {
          const latest = await load(runId, operation);
          if (!latest) return null;
          if (latest.status === 'running' || isTerminal(latest.status)) return info(latest);
        }
        continue;
      }
      const pageRun = execute(write.run);
      await pageRun;
      const after = await load(runId, operation);
      if (!after) return null;
      if (after.status === 'blocked' || after.status === 'waiting') return info(after);
      continue;
    }
    // Not claimable yet: wait within the window for the trigger time, an event or the retry's due time.
    const remaining = windowEnd - Date.now();
    if (remaining <= 0) return info(current);
    const untilDue = current.dueAt === null ? pollMs : Math.max(1, current.dueAt - engine.now());
    const aborted = await sleepCancellable(Math.min(pollMs, untilDue, remaining), signal);
    if (aborted) continue;
  }

  function execute(claimed: RunRecord): Promise<void> {
    const promise = executePage(engine, registered, claimed, signal);
    return workers()?.track(promise) ?? promise;
  }
}

/** Checks `task.run`'s options: only `signal` (an `AbortSignal`) and `waitMs` (0..3600000); else `CONFIG_INVALID`. */
function parseRunOptions(options: unknown, operation: string): { waitMs: number; signal: AbortSignal | undefined } {
  if (options === null || typeof options !== 'object') {
    throw new DocketError('CONFIG_INVALID', 'task.run options must be an object', { operation });
  }
  const unknown = Object.keys(options).find((key) => key !== 'signal' && key !== 'waitMs');
  if (unknown !== undefined) {
    throw new DocketError('CONFIG_INVALID', `task.run does not take ${JSON.stringify(unknown)}`, {
      operation,
      details: { path: unknown },
    });
  }
  const waitMs = (options as RunOptions).waitMs ?? 0;
  if (!Number.isInteger(waitMs) || waitMs < 0 || waitMs > 3_600_000) {
    throw new DocketError('CONFIG_INVALID', 'waitMs must be an integer in 0..3600000', {
      operation,
      details: { path: 'waitMs' },
    });
  }
  const signal = (options as RunOptions).signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new DocketError('CONFIG_INVALID', 'signal must be an AbortSignal', {
      operation,
      details: { path: 'signal' },
    });
  }
  return { waitMs, signal };
}

/** `task.run`'s own claim of one run, past a blocked status (`planClaim` with `explicit`), in one pure transaction. */
async function claimExplicitly(engine: Engine, runId: string): Promise<RunWrite | null> {
  const leaseMs = engine.options.protocol.leaseMs;
  const write = await engine.store.transact<RunWrite | null>(
    engine.namespace,
    runId,
    (_tx, latest) => {
      const planned = latest === null ? null : planClaim(latest, engine.workerActor, leaseMs, engine.now(), true);
      return { write: planned, value: planned };
    },
    { pure: true },
  );
  engine.written(write);
  return write;
}
