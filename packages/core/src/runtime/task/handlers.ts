import type { CheckResult } from '../../machine/commit-policy.js';
import type { CallbackKind, RunError } from '../../machine/run-types.js';
import type { Json } from '../../util/json.js';
import type { ChildOutcome } from '../page/children.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../page/model.js';
import type { BatchTask } from './batch-task.js';

/** The application's own writes, run inside the store transaction that commits the page. */
export type Effect<Tx> = (tx: Tx) => unknown;

/** Options of `ctx.next` and `ctx.end`. */
export interface ControlOptions<Tx> {
  effect?: Effect<Tx>;
  /**
   * `ctx.next` only: 1..1000 child runs created in this page's commit; the run then waits for them all
   * (`CHILDREN_STARTED`) and its next page sees their outcomes as `ctx.children`.
   */
  children?: readonly ChildStart[];
  /** `'fail'`: the first child to end `failed` or `cancelled` cancels the others and fails this run (`CHILD_FAILED`). */
  childFailure?: 'continue' | 'fail';
}

/** One child run for `ctx.next(state, { children })`: a task this queue defined, and the rules of its `start`. */
export interface ChildStart {
  /** The handle `queue.define` returned, in this queue. */
  // biome-ignore lint/suspicious/noExplicitAny: a child may be of any task of the queue, whatever its types.
  task: BatchTask<any, any>;
  query: unknown;
  /** Default: `child:<parentRunId>:<page>:<index>`. */
  idempotencyKey?: string;
  priority?: number;
  group?: string;
}

/** The object `ctx.next` / `ctx.end` return; the handler must return exactly this object. */
export interface PageControl {
  readonly kind: 'next' | 'end';
}

/** What `execute` receives for one attempt of one page. */
export interface ExecuteContext<Q, S, Tx> {
  readonly runId: string;
  readonly query: Q;
  /** The state the previous page committed (frozen), `null` on the first page. */
  readonly state: S | null;
  readonly page: number;
  /** `runId:page`, stable across retries of this page: the page's idempotency key. */
  readonly batchId: string;
  readonly attempt: number;
  /** Aborts on timeout, cancel, operator stop, deadline, budget, caller abort and close. */
  readonly signal: AbortSignal;
  /** The children the previous page started, in the order given, once all settled; `[]` otherwise. */
  readonly children: readonly ChildOutcome[];
  /** The page is done: commit `state` (omitted: keep the current one) and go to the next page. */
  next(state?: S, options?: ControlOptions<Tx>): PageControl;
  /** The run is done. */
  end(options?: ControlOptions<Tx>): PageControl;
  /** Reserves one unit of the run's model-call budget durably, then calls the provider with this attempt's signal. */
  callModel(provider: ModelProvider, request: ModelRequest): Promise<ModelResponse>;
}

/** What `check` receives, at claim (before any work) and at commit (inside the commit transaction). */
export interface CheckContext<Q, S, Tx> {
  readonly runId: string;
  readonly query: Q;
  readonly state: S | null;
  readonly phase: 'claim' | 'commit';
  readonly tx: Tx;
}

export type { CheckResult };

/** An event delivered to a waiting run. */
export interface TriggerEvent {
  id: string;
  type: string;
  payload?: Json;
}

/** What `validateEvent` receives. */
export interface ValidateEventContext<Q> {
  readonly query: Q;
  readonly event: TriggerEvent;
}

/** What a callback handler receives for one delivery attempt. */
export interface CallbackContext<Q, S> {
  readonly eventId: string;
  readonly kind: CallbackKind;
  readonly runId: string;
  readonly timestamp: string;
  readonly batchId: string;
  readonly sequence: number;
  readonly query: Q;
  readonly state: S | null;
  readonly error: RunError | null;
  readonly deliveryAttempt: number;
  readonly replayGeneration: number;
  readonly signal: AbortSignal;
}

/** The functions a task runs; only `execute` is required in `all` and `consumer` mode. */
export interface TaskHandlers<Q, S, Tx> {
  /** Runs one attempt of one page and says what comes next (`ctx.next`, `ctx.complete`, `ctx.wait`, ...). */
  execute(ctx: ExecuteContext<Q, S, Tx>): PageControl | Promise<PageControl>;
  /** Decides whether the run may still go on, at claim and again inside the commit transaction. */
  check?(ctx: CheckContext<Q, S, Tx>): CheckResult | Promise<CheckResult>;
  /** Accepts a delivered event (`true`) or refuses it (`false` or a reason), failing the run with `TRIGGER_INVALID`. */
  validateEvent?(ctx: ValidateEventContext<Q>): boolean | string | Promise<boolean | string>;
  /** Called (at least once, from the callback loop) after the run succeeded. */
  onSuccess?(ctx: CallbackContext<Q, S>): unknown;
  /** Called (at least once, from the callback loop) after the run failed, was cancelled or expired. */
  onFailure?(ctx: CallbackContext<Q, S>): unknown;
  /** Called once per batch when its last run settled. */
  onBatchSettled?(ctx: CallbackContext<Q, S>): unknown;
}
