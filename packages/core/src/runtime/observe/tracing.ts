import { isTerminal, type RunRecord } from '../../machine/run-types.js';
import type { RunWrite } from '../../store/contract.js';
import type { Engine } from '../queue/engine.js';
import type { ResolvedDefinition } from '../task/definition.js';
import { type PageOutcome, type PageSpan, type StartSpan, type Tracer, traced } from './telemetry.js';

/** One executing page's span, its claim's fence (its writes carry it), and the outcome its writes left so far. */
export interface PageTrace {
  span: PageSpan;
  fence: number;
  outcome: PageOutcome | null;
}

/**
 * The spans of `telemetry.tracer` as the runtime drives them: one per start call, one per executed page. Without a
 * tracer every method returns at its first line.
 */
export class Tracing {
  /**
   * Pages in flight with a span, by run id, oldest first: the outcome each page's writes left, until the page settles.
   * A run's next page can begin before the previous one's commit is reported (a store may write that commit with the
   * next claim), so a run can have two.
   */
  private readonly pages = new Map<string, PageTrace[]>();
  /** The due time of each run this process claimed, read from the run before its claim (for the queue time). */
  private readonly dueAtClaim = new Map<string, number | null>();

  constructor(private readonly engine: Engine) {}

  /** True when a tracer is set and records now (`Tracer.active`). */
  get enabled(): boolean {
    return this.live() !== null;
  }

  /** The tracer, when one is set and records now (`Tracer.active`); `null` otherwise. */
  private live(): Tracer | null {
    const tracer = this.engine.options.telemetry.tracer;
    return tracer === null || tracer.active?.() === false ? null : tracer;
  }

  /** A start of `count` runs of `def` begins: its span, or `null`. */
  startSpan(def: ResolvedDefinition, count: number): StartSpan | null {
    const tracer = this.live();
    if (tracer === null) return null;
    return traced(this.engine.log, 'startSpan', () =>
      tracer.startSpan({
        namespace: this.engine.namespace,
        task: { name: def.name, version: def.version },
        count,
      }),
    );
  }

  /** A start's span ends: how many runs it created, or the error it threw. */
  endStart(span: StartSpan | null, outcome: { created: number } | { error: unknown }): void {
    if (span === null) return;
    traced(this.engine.log, 'startSpan.end', () => span.end(outcome));
  }

  /** The worker's claim plan saw `run` before claiming it: keep when it became due. */
  claiming(run: RunRecord): void {
    if (this.enabled) this.dueAtClaim.set(run.runId, run.dueAt);
  }

  /** A claim turn's pages have started: forget the due times of runs it planned but did not get. */
  claimed(): void {
    if (this.dueAtClaim.size > 0) this.dueAtClaim.clear();
  }

  /**
   * A claimed page of `run` begins to execute: opens its span, and answers the handle `pageEnded` takes (the run's
   * next page can begin before this one's execution has settled).
   */
  pageStarted(run: RunRecord): PageTrace | null {
    const tracer = this.live();
    if (tracer === null) return null;
    const dueAt = this.dueAtClaim.get(run.runId) ?? null;
    this.dueAtClaim.delete(run.runId);
    const span = traced(this.engine.log, 'pageSpan', () =>
      tracer.pageSpan({
        namespace: run.namespace,
        runId: run.runId,
        task: { name: run.taskName, version: run.taskVersion },
        page: run.page,
        attempt: run.pageFailures + 1,
        traceParent: run.traceParent,
        dueAt,
        claimedAt: run.updatedAt,
      }),
    );
    if (span === null) return null;
    const page: PageTrace = { span, fence: run.fence, outcome: null };
    this.pages.set(run.runId, [...(this.pages.get(run.runId) ?? []), page]);
    return page;
  }

  /** The `traceparent` of the page of `runId` in flight, for the children it starts; `null` when none is traced. */
  pageTraceParent(runId: string): string | null {
    if (this.pages.size === 0) return null;
    return this.pages.get(runId)?.at(-1)?.span.traceParent ?? null;
  }

  /** Runs `body` (the call of the page's handler) inside the page span's context, when its span offers one. */
  around<T>(runId: string, body: () => T): T {
    if (this.pages.size === 0) return body();
    const span = this.pages.get(runId)?.at(-1)?.span;
    return span?.around === undefined ? body() : span.around(body);
  }

  /** A write of this process: a run that finished is reported; a run whose page is in flight gets its outcome. */
  written(write: RunWrite): void {
    const tracer = this.engine.options.telemetry.tracer;
    if (tracer === null) return;
    if (tracer.settled !== undefined && isTerminal(write.run.status) && write.history.length > 0 && this.enabled) {
      const { run } = write;
      const info = {
        namespace: run.namespace,
        runId: run.runId,
        task: { name: run.taskName, version: run.taskVersion },
        status: run.status,
        reason: run.reason,
      };
      traced(this.engine.log, 'settled', () => tracer.settled?.(info));
    }
    if (this.pages.size === 0) return;
    // A claim is the next page's start, written before that page's span exists: it is no outcome of this one.
    if (write.run.reason === 'CLAIMED') return;
    const page = this.pages.get(write.run.runId)?.find((trace) => trace.fence === write.run.fence);
    if (page === undefined) return;
    const { run } = write;
    page.outcome = {
      status: run.status,
      reason: run.reason,
      error: run.error === null ? null : { code: run.error.code, message: run.error.message },
    };
  }

  /** The page of `runId` settled: ends its span with what its writes left (`null`: nothing was written). */
  pageEnded(runId: string, page: PageTrace | null): void {
    if (page === null) return;
    const left = this.pages.get(runId)?.filter((trace) => trace !== page) ?? [];
    if (left.length === 0) this.pages.delete(runId);
    else this.pages.set(runId, left);
    traced(this.engine.log, 'pageSpan.end', () => page.span.end(page.outcome));
  }
}
