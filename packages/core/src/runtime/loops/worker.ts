import { planClaim, plannedWrites } from '../../machine/claim-policy.js';
import { earlierReopening } from '../../machine/flow.js';
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
  /**
   * Set by a claim that flow control held back (a limit, a hold, a paused task): when a claim may succeed again,
   * `null` once a lease is given back. The loop sleeps until then instead of until the next due run.
   */
  private heldBack: number | null | undefined = undefined;
  /**
   * Whether a claim is in flight, and whether a page settled during it: a lease given back then was not seen by that
   * claim, so if flow control held the claim back until a lease is given back, the loop claims again at once.
   */
  private claiming = false;
  private settledWhileClaiming = false;
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
    // A lease given back may free a fleet-wide slot this process waits for.
    if (this.claiming) this.settledWhileClaiming = true;
    else if (this.heldBack === null) this.engine.wake();
    if (this.active === 0) for (const wake of this.idle.splice(0)) wake();
  };

  /** `settled` for a rejected execution whose error the loop keeps. */
  private readonly failedNoted = (error: unknown): void => {
    this.noteError(error);
    this.settled();
  };

  /** Claims into free slots until stopped, sleeping until the next due run (or a wake) when nothing is claimable. */
  private async loop(): Promise<void> {
    const { engine } = this;
    const { pollMs } = engine.options.protocol;
    const tasks = this.taskKeys();
    while (this.running) {
      // More may be due right away only when the last claim filled what it asked for.
      let turn: 'more' | 'full' | 'idle' = 'idle';
      try {
        await this.recoverIfDue();
        turn = await this.claimTurn(tasks);
        this.errors.ok();
      } catch (error) {
        this.noteError(error);
      }
      if (!this.running) break;
      if (turn === 'more') continue;
      if (turn === 'full') {
        await engine.sleep(pollMs);
        engine.waitingForSlot = false;
        continue;
      }
      const held = this.heldBack;
      if (held === null && this.settledWhileClaiming) continue;
      const wait = held === undefined ? await this.untilNextDue(tasks) : untilHeldBack(held, engine.now(), pollMs);
      await engine.sleep(Math.max(1, wait));
    }
  }

  /** At most every `pollMs`: takes back runs whose lease expired (the recovery sweep). */
  private async recoverIfDue(): Promise<void> {
    const { engine } = this;
    const { pollMs, recoveryLimit } = engine.options.protocol;
    const now = engine.now();
    if (now - this.lastRecovery < pollMs && now >= this.lastRecovery) return;
    this.lastRecovery = now;
    const actor = engine.workerActor;
    const recovered = await engine.store.recoverExpired({
      namespace: engine.namespace,
      limit: 100,
      now,
      plan: (run) => writeOf(transition(run, { type: 'lease_expired', actor, recoveryLimit }, now)),
    });
    for (const run of recovered) {
      engine.log.warn(
        { runId: run.runId, task: run.taskName, status: run.status, reason: run.reason },
        'lease expired: run recovered',
      );
      engine.written({ run, history: [], events: [] });
    }
  }

  /**
   * One claim into the free slots, each claimed run's page started: `more` when the claim filled what it asked for,
   * `full` when no slot was free, else `idle`.
   */
  private async claimTurn(tasks: readonly TaskKey[]): Promise<'more' | 'full' | 'idle'> {
    const { engine } = this;
    const free = engine.options.runtime.concurrency - engine.inflight.size - engine.straggling;
    if (free <= 0 || tasks.length === 0 || !this.running) {
      // Set before the loop's sleep, with no await between: a page that settles from here on wakes the loop.
      engine.waitingForSlot = free <= 0;
      return free <= 0 ? 'full' : 'idle';
    }
    const { leaseMs } = engine.options.protocol;
    const actor = engine.workerActor;
    const claimNow = engine.now();
    const planned: RunWrite[] = [];
    // Half the slots per claim at most: while one half settles, the next claim is already in flight.
    const limit = Math.min(free, Math.max(8, Math.ceil(engine.options.runtime.concurrency / 2)));
    this.heldBack = undefined;
    this.claiming = true;
    this.settledWhileClaiming = false;
    const claimedRuns = await engine.store
      .claimDue({
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
        heldBack: this.noteHeldBack,
      })
      .finally(() => {
        this.claiming = false;
      });
    this.startClaimed(planned, claimedRuns);
    engine.tracing.claimed();
    return claimedRuns.length >= limit ? 'more' : 'idle';
  }

  /**
   * Starts the page of each run the store answered. Only those were written: a plan it made for a row that had moved
   * is not a claim. The page executes the run as the store answers it, the row as written (a store may have planned
   * on part of a row and read the rest back with the write).
   */
  private startClaimed(planned: readonly RunWrite[], claimedRuns: readonly RunRecord[]): void {
    const { engine } = this;
    const writeOf = plannedWrites(planned, claimedRuns);
    for (let i = 0; i < claimedRuns.length; i++) {
      const run = claimedRuns[i] as RunRecord;
      const write = writeOf(run.runId, i);
      if (write === undefined) continue;
      engine.written(write);
      if (run.status !== 'running' || run.lease?.owner !== engine.workerActor) continue;
      const task = engine.tasks.get(`${run.taskName}@${run.taskVersion}`);
      if (!task) continue;
      this.track(executePage(engine, task, run), true);
    }
  }

  /** How long to sleep when nothing more is claimable now: until the next due run, at most `pollMs`. */
  private async untilNextDue(tasks: readonly TaskKey[]): Promise<number> {
    const { engine } = this;
    const { pollMs } = engine.options.protocol;
    try {
      const due = await engine.store.nextDueAt(engine.namespace, tasks);
      return due === null ? pollMs : Math.min(pollMs, Math.max(0, due - engine.now()));
    } catch (error) {
      this.noteError(error);
      return pollMs;
    }
  }

  /** Keeps the earliest time a held-back claim may succeed again (see `heldBack`). */
  private readonly noteHeldBack = (until: number | null): void => {
    this.heldBack = earlierReopening(this.heldBack, until);
  };

  private noteError(error: unknown): void {
    this.errors.failed(error);
  }
}

/** How long to sleep after flow control held a claim back: until it may succeed, at most `pollMs`. */
function untilHeldBack(until: number | null, now: number, pollMs: number): number {
  return until === null ? pollMs : Math.min(pollMs, Math.max(0, until - now));
}
