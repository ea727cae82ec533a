import { isTerminal, type RunInfo } from '../../machine/run-types.js';
import { DocketError } from '../../util/errors.js';
import { sleepCancellable } from '../../util/sleep.js';
import type { TaskScope } from './task-scope.js';

/** Options of `task.wait`. */
export interface WaitOptions {
  /** Stops waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** How long to wait at most (default 30000, at most 86400000); then the run is answered as it is. */
  timeoutMs?: number;
}

/** How often `wait` reads the run: often enough to answer soon after the run ends, without flooding the store. */
const WAIT_POLL_MS = 50;

/**
 * `task.wait`: reads the run until it is terminal (`success`, `failed`, `cancelled`) or `timeoutMs` passes, and
 * answers it as it is then; `null` for a run that does not exist. It only watches: it never claims or executes.
 */
export async function waitForRun<Q, S>(
  scope: TaskScope<Q, S>,
  runId: string,
  options: WaitOptions = {},
): Promise<RunInfo<Q, S> | null> {
  const operation = 'task.wait';
  scope.guards.assertUsable(operation);
  const { signal, timeoutMs } = checkOptions(options, operation);
  const until = Date.now() + timeoutMs;
  const poll = Math.min(WAIT_POLL_MS, scope.engine.options.protocol.pollMs);
  for (;;) {
    signal?.throwIfAborted();
    const run = await scope.load(runId, operation);
    if (run === null) return null;
    const left = until - Date.now();
    if (isTerminal(run.status) || left <= 0) return scope.info(run);
    await sleepCancellable(Math.min(poll, left), signal);
  }
}

function checkOptions(options: WaitOptions, operation: string): { signal?: AbortSignal; timeoutMs: number } {
  if (options === null || typeof options !== 'object') {
    throw new DocketError('CONFIG_INVALID', 'task.wait options must be an object', { operation });
  }
  for (const key of Object.keys(options)) {
    if (key !== 'signal' && key !== 'timeoutMs') {
      throw new DocketError('CONFIG_INVALID', `unknown task.wait option ${key}`, { operation, details: { path: key } });
    }
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 86_400_000) {
    throw new DocketError('CONFIG_INVALID', 'timeoutMs must be an integer in 0..86400000', {
      operation,
      details: { path: 'timeoutMs' },
    });
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new DocketError('CONFIG_INVALID', 'signal must be an AbortSignal', {
      operation,
      details: { path: 'signal' },
    });
  }
  return options.signal === undefined ? { timeoutMs } : { signal: options.signal, timeoutMs };
}
