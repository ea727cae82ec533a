import { planClaim } from '../machine/claim-policy.js';
import { iso } from '../machine/run-types.js';
import type { RunWrite, SelectRequest, TaskKey } from '../store/contract.js';

/**
 * A claim request as the worker loop makes it, at `now` (a clock of the test's choosing): core's `planClaim`, and the
 * plain claim it describes; `planned` holds the write planned for each run.
 */
export function workerClaim(tasks: TaskKey[], limit: number, now = Date.now()) {
  const planned = new Map<string, RunWrite>();
  const request: SelectRequest = {
    namespace: 'default',
    tasks,
    limit,
    now,
    plainClaim: { actor: 'worker:plain', leaseExpiresAt: now + 30_000, at: iso(now) },
    plan(run) {
      const write = planClaim(run, 'worker:plain', 30_000, now);
      if (write !== null) planned.set(run.runId, write);
      return write;
    },
  };
  return { request, planned };
}
