import { isThenable } from '../../util/thenable.js';
import type { InFlight, StopReason } from '../queue/engine.js';

/** How a page's handler ended: it returned, it threw, or the page was stopped first. */
export type Outcome =
  | { kind: 'returned'; value: unknown }
  | { kind: 'threw'; error: unknown }
  | { kind: 'stopped'; reason: StopReason };

/**
 * One page in flight in this process: its stop state, its abort signal (made on first use) and its outcome (a promise
 * of it made on first read). The first of the handler's end and a stop wins; what comes later is ignored. A class, not a set
 * of closures, because thousands of pages are in flight at once and each lives until its commit ends.
 */
export class PageFlight implements InFlight {
  stopReason: StopReason | null = null;
  private controller: AbortController | null = null;
  private abortedWith: Error | null = null;
  /**
   * The outcome once settled, readable without waiting for `outcome`; `null` while the handler runs. A handler that
   * returned synchronously has it at once, and nothing left to time or stop.
   */
  result: Outcome | null = null;
  /** The promise `outcome` answers, made on first read: a page whose handler ended synchronously never needs one. */
  private promised: Promise<Outcome> | null = null;
  private resolve: ((outcome: Outcome) => void) | null = null;
  /** False while a handler's promise is pending, even after a stop settled the outcome first. */
  handlerSettled = true;
  /** Called once when a handler that was still running at its page's end finally settles. */
  onHandlerSettled: (() => void) | null = null;

  constructor(
    readonly runId: string,
    readonly token: number,
  ) {}

  /** Settles with the page's outcome: the handler's end, or the stop that came first. */
  get outcome(): Promise<Outcome> {
    if (this.promised === null) {
      const settled = this.result;
      this.promised =
        settled !== null
          ? Promise.resolve(settled)
          : new Promise<Outcome>((resolve) => {
              this.resolve = resolve;
            });
    }
    return this.promised;
  }

  private finish(outcome: Outcome): void {
    if (this.result !== null) return;
    this.result = outcome;
    const resolve = this.resolve;
    this.resolve = null;
    resolve?.(outcome);
  }

  signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.abortedWith !== null) this.controller.abort(this.abortedWith);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.abortedWith !== null) return;
    this.abortedWith = reason;
    this.controller?.abort(reason);
    this.finish({ kind: 'stopped', reason: this.stopReason ?? 'cancelled' });
  }

  /** Calls `handlers.execute(ctx)` and finishes with what it returns or throws (now, or once its promise settles). */
  run<C>(handlers: { execute(ctx: C): unknown }, ctx: C): void {
    let value: unknown;
    let thenable: boolean;
    try {
      value = handlers.execute(ctx);
      thenable = isThenable(value); // reading `then` may throw too
    } catch (error) {
      this.finish({ kind: 'threw', error });
      return;
    }
    if (!thenable) {
      this.finish({ kind: 'returned', value });
      return;
    }
    this.handlerSettled = false;
    Promise.resolve(value).then(
      (resolved) => {
        this.handlerDone();
        this.finish({ kind: 'returned', value: resolved });
      },
      (error: unknown) => {
        this.handlerDone();
        this.finish({ kind: 'threw', error });
      },
    );
  }

  private handlerDone(): void {
    this.handlerSettled = true;
    const done = this.onHandlerSettled;
    this.onHandlerSettled = null;
    done?.();
  }
}
