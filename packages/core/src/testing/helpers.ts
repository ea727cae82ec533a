// Helpers for an application's own tests: no test runner needed (they are exported from `@docket/core/testing`
// beside the memory store, and the conformance suite uses them too).
import type { RunStatus } from '../machine/run-types.js';
import type { Clock } from '../runtime/queue/options.js';
import type { BatchTask } from '../runtime/task/batch-task.js';

/** A clock tests move by hand. */
export interface ManualClock extends Clock {
  /** Moves the clock forward by `ms`. */
  advance(ms: number): void;
  /** Sets the clock to `ms` epoch milliseconds. */
  set(ms: number): void;
}

/** A manual clock starting at `start` (defaults to the real time now). */
export function manualClock(start = Date.now()): ManualClock {
  let now = start;
  return {
    now: () => now,
    advance(ms) {
      now += ms;
    },
    set(ms) {
      now = ms;
    },
  };
}

/** Polls `predicate` every 5 ms until it is truthy or `timeoutMs` passes (then throws with `what`). */
export async function waitFor<T>(
  predicate: () => Promise<T> | T,
  what: string,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until a run reaches one of `statuses` through the task API. */
export async function waitForStatus<Q, S>(
  task: BatchTask<Q, S>,
  runId: string,
  statuses: RunStatus | RunStatus[],
  timeoutMs = 10_000,
) {
  const wanted = Array.isArray(statuses) ? statuses : [statuses];
  return waitFor(
    async () => {
      const info = await task.get(runId);
      return info && wanted.includes(info.status) ? info : null;
    },
    `run ${runId} to be ${wanted.join('|')}`,
    timeoutMs,
  );
}
