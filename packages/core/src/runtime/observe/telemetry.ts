import type { HistoryEntry, Reason, RunStatus } from '../../machine/run-types.js';
import { isThenable } from '../../util/thenable.js';
import { type Logger, logError } from './logger.js';

/** A structured lifecycle event given to `telemetry.sink`: one per transition and one per callback delivery. */
export type TelemetryEvent =
  | {
      type: 'transition';
      namespace: string;
      runId: string;
      task: { name: string; version: string };
      revision: number;
      entry: HistoryEntry;
    }
  | {
      type: 'delivery';
      namespace: string;
      runId: string;
      eventId: string;
      kind: string;
      deliveryAttempt: number;
      outcome: 'delivered' | 'retrying' | 'dead_letter';
      error?: { code: string; message: string };
    };

/** A W3C `traceparent` (`00-<trace id>-<span id>-<flags>`): the trace context stored with a run at its start. */
export type TraceParent = string;

/** What a tracer is told when a start (`start`, `startMany`, a schedule's firing) begins. */
export interface StartSpanInfo {
  namespace: string;
  task: { name: string; version: string };
  /** How many runs the call starts (1 for `start`). */
  count: number;
}

/** A start's span, as a tracer gives it. */
export interface StartSpan {
  /** The context to store with the runs this start creates, so that their pages link to this span; or `null`. */
  readonly traceParent: TraceParent | null;
  /** The start returned: how many runs it created (the rest answered existing ones), or the error it threw. */
  end(outcome: { created: number } | { error: unknown }): void;
}

/** What a tracer is told when a claimed page begins to execute. */
export interface PageSpanInfo {
  namespace: string;
  runId: string;
  task: { name: string; version: string };
  page: number;
  attempt: number;
  /** The context stored with the run at its start, if any. */
  traceParent: TraceParent | null;
  /** When the run became due (epoch ms), if known, and when this page claimed it. */
  dueAt: number | null;
  claimedAt: number;
}

/** How a page ended, as its span is told: the run's status and reason after the page, and its error if any. */
export interface PageOutcome {
  status: RunStatus;
  reason: Reason;
  error: { code: string; message: string } | null;
}

/** A page's span, as a tracer gives it. */
export interface PageSpan {
  /** Optional: the span's own context, stored with the child runs its page starts so their pages link to it. */
  readonly traceParent?: TraceParent | null;
  /** Optional: runs the handler's call inside the span's context, so that spans the handler makes are its children. */
  around?<T>(body: () => T): T;
  /** The page's execution settled; `outcome` is `null` when nothing was written (its commit failed in the store). */
  end(outcome: PageOutcome | null): void;
}

/**
 * The tracing hooks of `telemetry.tracer` (what `@docket/otel` gives): a span per start and per page. Each hook is
 * called synchronously on the runtime's path, so it must be cheap; a hook that throws is logged and ignored.
 */
export interface Tracer {
  /** A start begins; answers its span, or `null` to trace nothing. */
  startSpan(info: StartSpanInfo): StartSpan | null;
  /** A claimed page begins; answers its span, or `null` to trace nothing. */
  pageSpan(info: PageSpanInfo): PageSpan | null;
  /** Optional: a run reached a terminal status in a write of this process (a page's, an operator's, a deadline's). */
  settled?(info: SettledInfo): void;
  /**
   * Optional: whether anything would be recorded now. While it answers `false` the runtime makes no start or page
   * span and reports no settled run, and keeps none of the bookkeeping they need: a tracer whose every call would be a
   * no-op costs what no tracer costs. Asked at every start, claim and write, so it must be cheap.
   */
  active?(): boolean;
}

/** What `Tracer.settled` is told: the run that finished and how. */
export interface SettledInfo {
  namespace: string;
  runId: string;
  task: { name: string; version: string };
  status: RunStatus;
  reason: Reason;
}

/**
 * Calls the sink for an event and never lets a failing sink break the runtime: a throw or a rejected promise is
 * caught and logged at `warn` (a telemetry sink is an observer: its failure must not change what the runtime does,
 * nor crash the process with an unhandled rejection).
 */
export function emitTelemetry(
  log: Logger,
  sink: ((event: TelemetryEvent) => unknown) | null,
  event: TelemetryEvent,
): void {
  if (sink === null) return;
  try {
    const result = sink(event);
    if (isThenable(result)) Promise.resolve(result).catch((error: unknown) => sinkFailed(log, event, error));
  } catch (error) {
    sinkFailed(log, event, error);
  }
}

function sinkFailed(log: Logger, event: TelemetryEvent, error: unknown): void {
  log.warn({ event: event.type, runId: event.runId, err: logError(error) }, 'telemetry sink failed');
}

/** Calls a tracer hook, logging (and otherwise ignoring) a throw: tracing never changes what the runtime does. */
export function traced<T>(log: Logger, hook: string, call: () => T | null): T | null {
  try {
    return call();
  } catch (error) {
    log.warn({ hook, err: logError(error) }, 'telemetry tracer failed');
    return null;
  }
}
