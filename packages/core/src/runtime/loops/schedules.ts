import type { Engine } from '../queue/engine.js';
import { fireSchedule } from '../task/schedules.js';
import { LoopErrors } from './loop-errors.js';

/** How many due schedules one turn fires at most; the rest are due at the next turn. */
const PER_TURN = 50;

/**
 * Fires the due schedules of the tasks this queue executes, in `all` and `consumer` queues: every `pollMs`, on an
 * unref'd timer. Each firing is one transaction that moves the schedule on only if no other consumer did, so a slot
 * makes one run however many processes fire its schedule. A failed turn is kept for `health()` and tried again.
 */
export class ScheduleLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();
  /** The turns' errors: logged, and the last one shown by `health()` until a turn succeeds. */
  readonly errors: LoopErrors;

  constructor(private readonly engine: Engine) {
    this.errors = new LoopErrors(engine.log, 'schedules');
  }

  /** Starts firing: a first turn at once, then one every `pollMs`. */
  start(): void {
    this.schedule(0);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.running = this.turn().then(
        () => this.errors.ok(),
        (error: unknown) => this.errors.failed(error),
      );
      void this.running.then(() => {
        if (this.timer !== null) this.schedule(this.engine.options.protocol.pollMs);
      });
    }, ms);
    this.timer.unref?.();
  }

  /** One turn: reads the due schedules of the executed tasks and fires each. */
  private async turn(): Promise<void> {
    const { engine } = this;
    const executed = [...engine.tasks.values()].filter((task) => task.handlers !== null);
    if (executed.length === 0) return;
    const tasks = executed.map(({ definition }) => ({ name: definition.name, version: definition.version }));
    const due = await engine.store.dueSchedules({
      namespace: engine.namespace,
      tasks,
      now: engine.now(),
      limit: PER_TURN,
    });
    for (const schedule of due) {
      const task = engine.tasks.get(`${schedule.taskName}@${schedule.taskVersion}`);
      if (task === undefined || this.timer === null) continue;
      const made = await fireSchedule(engine, task.definition, schedule);
      if (made > 0) engine.wake();
    }
  }

  /** Stops firing and waits for a turn in progress. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
