import { planClaim, plannedWrites } from '../../machine/claim-policy.js';
import { iso, type RunRecord } from '../../machine/run-types.js';
import { writeOf } from '../../machine/run-write.js';
import { transition } from '../../machine/state-machine.js';
import type { RunWrite, TaskKey } from '../../store/contract.js';
import { executePage } from '../page/execute.js';
import type { Engine } from '../queue/engine.js';
import { LoopErrors } from './loop-errors.js';

/** The worker loop of one queue: claims due runs into free slots, executes them, and sweeps expired leases. */
export class WorkerLoop {
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  /** Executions tracked and not yet settled, and the `drain` calls waiting for none to be left. */
  private active = 0;
  private idle: (() => void)[] = [];
  private lastRecovery = Number.NEGATIVE_INFINITY;
  /** The loop's errors: logged, and the last one shown by `health()`. */
  readonly errors: LoopErrors;

  constructor(private readonly engine: Engine) {
    this.errors = new LoopErrors(engine.log, 'worker');
  }

  /** Task identities this process can execute. */
  private taskKeys(): TaskKey[] {
    const keys: TaskKey[] = [];
    for (const task of this.engine.tasks.values()) {
      if (task.handlers) keys.push({ name: task.definition.name, version: task.definition.version });
    }
    return keys;
  }

  private unsubscribe: (() => void) | null = null;

  /** Starts claiming, and listens to the store's change signal when it has one. */
  start(): void {
    this.running = true;
    this.unsubscribe = this.engine.store.subscribe?.(() => this.engine.wake(), this.engine.log) ?? null;
    this.loopDone = this.loop();
  }

  /** Stops claiming; pages in flight continue until `drain`. */
  async stopClaiming(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.engine.wake();
    await this.loopDone;
  }

  /** Waits for every execution started by this loop. */
  async drain(): Promise<void> {
    while (this.active > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /**
   * Counts an execution until it settles (so that `drain` waits for it) and answers it unchanged. With `noteErrors`
   * its rejection is kept as the loop's last error; the caller sees it on the promise answered either way. Used by
   * the loop and by `task.run`.
   */
  track(execution: Promise<void>, noteErrors = false): Promise<void> {
    this.active++;
    execution.then(this.settled, noteErrors ? this.failedNoted : this.settled);
    return execution;
  }

  /** One tracked execution settled: the last one wakes `drain`. Bound once, shared by every page. */
  private readonly settled = (): void => {
    this.active--;
    if (this.active === 0) for (const wake of this.idle.splice(0)) wake();
  };

  /** `settled` for a rejected execution whose error the loop keeps. */
  private readonly failedNoted = (error: unknown): void => {
    this.noteError(error);
    this.settled();
  };

  private async loop(): Promise<void> {
    const { engine } = this;
    const { pollMs, leaseMs, recoveryLimit } = engine.options.protocol;
    const tasks = this.taskKeys();
    const actor = engine.workerActor;
    while (this.running) {
      // More may be due right away only when the last claim filled what it asked for.
      let more = false;
      let full = false;
      try {
        const now = engine.now();
        if (now - this.lastRecovery >= pollMs || now < this.lastRecovery) {
          this.lastRecovery = now;
          const recovered = await engine.store.recoverExpired({
            namespace: engine.namespace,
            limit: 100,
            now,
            plan: (run) => {
              const decision = transition(run, { type: 'lease_expired', actor, recoveryLimit }, now);
              return writeOf(decision);
            },
          });
          for (const run of recovered) {
            engine.log.warn(
              { runId: run.runId, task: run.taskName, status: run.status, reason: run.reason },
              'lease expired: run recovered',
            );
            engine.written({ run, history: [], events: [] });
          }
        }
        const free = engine.options.runtime.concurrency - engine.inflight.size - engine.straggling;
        if (free > 0 && tasks.length > 0 && this.running) {
          const claimNow = engine.now();
          const planned: RunWrite[] = [];
          // Half the slots per claim at most: while one half settles, the next claim is already in flight.
          const limit = Math.min(free, Math.max(8, Math.ceil(engine.options.runtime.concurrency / 2)));
          const claimedRuns = await engine.store.claimDue({
            namespace: engine.namespace,
            tasks,
            limit,
            now: claimNow,
            // The write `planClaim` makes for a plain claim, as data: a store may apply it in the selecting statement.
            plainClaim: { actor, leaseExpiresAt: claimNow + leaseMs, at: iso(claimNow) },
            plan: (run) => {
              engine.tracing.claiming(run);
              const write = planClaim(run, actor, leaseMs, claimNow);
              if (write) planned.push(write);
              return write;
            },
          });
          // Only the runs the store answers were written: a plan it made for a row that had moved is not a claim. The
          // page executes the run as the store answers it, the row as written (a store may have planned on part of
          // a row and read the rest back with the write).
          const writeOf = plannedWrites(planned, claimedRuns);
          for (let i = 0; i < claimedRuns.length; i++) {
            const run = claimedRuns[i] as RunRecord;
            const write = writeOf(run.runId, i);
            if (write === undefined) continue;
            engine.written(write);
            if (run.status !== 'running' || run.lease?.owner !== actor) continue;
            const task = engine.tasks.get(`${run.taskName}@${run.taskVersion}`);
            if (!task) continue;
            this.track(executePage(engine, task, run), true);
          }
          engine.tracing.claimed();
          more = claimedRuns.length >= limit;
        } else {
          full = free <= 0;
          // Set before the sleep below, with no await between: a page that settles from here on wakes the loop.
          engine.waitingForSlot = full;
        }
        this.errors.ok();
      } catch (error) {
        this.noteError(error);
      }
      if (!this.running) break;
      if (more) continue;
      if (full) {
        await engine.sleep(pollMs);
        engine.waitingForSlot = false;
        continue;
      }
      let wait = pollMs;
      try {
        const due = await engine.store.nextDueAt(engine.namespace, tasks);
        if (due !== null) wait = Math.min(pollMs, Math.max(0, due - engine.now()));
      } catch (error) {
        this.noteError(error);
      }
      await engine.sleep(Math.max(1, wait));
    }
  }

  private noteError(error: unknown): void {
    this.errors.failed(error);
  }
}
