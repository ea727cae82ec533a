import { copyRun, type RunRecord } from '../../machine/run-types.js';
import { holdsLease } from '../../machine/state-machine.js';
import type { Engine, StopReason } from '../queue/engine.js';
import { PURE } from '../queue/write-transition.js';

/** The timers of a page whose handler is running: its timeout, its deadline (if any) and its heartbeat. */
export interface PageTimers {
  timeout: NodeJS.Timeout;
  deadline: NodeJS.Timeout | null;
  heartbeat: NodeJS.Timeout;
}

/** Starts a running page's timers; they stop the page through `engine.stopLocal`. */
export function startPageTimers(engine: Engine, run: RunRecord, token: number): PageTimers {
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

/** Clears a page's timers once its outcome is known. */
export function stopPageTimers(timers: PageTimers): void {
  clearTimeout(timers.timeout);
  if (timers.deadline !== null) clearTimeout(timers.deadline);
  clearInterval(timers.heartbeat);
}

/** Stops this process's page of `runId` (a timer's callback). */
export function stopPage(engine: Engine, runId: string, reason: StopReason): void {
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
