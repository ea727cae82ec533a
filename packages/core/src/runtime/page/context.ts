import type { ControlOptions, ExecuteContext, PageControl } from '../task/handlers.js';
import type { ChildOutcome } from './children.js';
import type { PageFlight } from './flight.js';
import type { ModelProvider, ModelRequest, ModelResponse } from './model.js';

/** The page's own controls, closures so that a handler may destructure them (`const { end } = ctx`). */
export interface PageControls {
  next(state?: unknown, options?: ControlOptions<unknown>): PageControl;
  end(options?: ControlOptions<unknown>): PageControl;
  callModel(provider: ModelProvider, request: ModelRequest): Promise<ModelResponse>;
}

/**
 * A handler's `ctx`: the page's fields, its controls, and `signal`, made on first read. A class, so that `signal` is
 * one getter on the prototype rather than a getter on every page's object (which cost ~1 KB per page in flight).
 */
export class PageContext implements ExecuteContext<unknown, unknown, unknown> {
  readonly #flight: PageFlight;

  constructor(
    readonly runId: string,
    readonly query: unknown,
    readonly state: unknown,
    readonly page: number,
    readonly attempt: number,
    readonly next: PageControls['next'],
    readonly end: PageControls['end'],
    readonly callModel: PageControls['callModel'],
    flight: PageFlight,
    readonly children: readonly ChildOutcome[],
  ) {
    this.#flight = flight;
  }

  /** `runId:page`, stable across retries of this page: the page's idempotency key. */
  get batchId(): string {
    return `${this.runId}:${this.page}`;
  }

  /** Aborts on timeout, cancel, operator stop, deadline, budget, caller abort and close. */
  get signal(): AbortSignal {
    return this.#flight.signal();
  }
}
