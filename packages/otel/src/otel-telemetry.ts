import type { PageOutcome, PageSpan, PageSpanInfo, QueueOptions, StartSpan, StartSpanInfo, Tracer } from '@docket/core';
import {
  type Attributes,
  type Counter,
  context,
  createNoopMeter,
  diag,
  type Histogram,
  type MeterProvider,
  metrics,
  type Tracer as OtelTracer,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { formatTraceParent, parseTraceParent } from './traceparent.js';

/** What `otelTelemetry` takes: the providers to use, the globally registered ones when left out. */
export interface OtelTelemetryOptions {
  tracerProvider?: TracerProvider;
  meterProvider?: MeterProvider;
}

/** The `telemetry` option of `createQueue`, as `otelTelemetry` makes it. */
export type DocketTelemetry = NonNullable<QueueOptions['telemetry']> & {
  /** The hooks: `docket.start` and `docket.page` spans, and finished runs for `docket.runs.settled`. */
  tracer: Tracer;
};

/** The instrumentation scope Docket's spans and metrics carry. */
const SCOPE = '@docket/otel';

/** The four metrics. */
interface Instruments {
  started: Counter;
  settled: Counter;
  pageDuration: Histogram;
  queueTime: Histogram;
}

/**
 * OpenTelemetry for a Docket queue: `createQueue({ telemetry: otelTelemetry() })`. Spans: `docket.start` (producer)
 * around each `start`/`startMany`, and `docket.page` (consumer) around each executed page, linked to its run's start
 * span through the `traceparent` stored with the run, so the link holds across processes and restarts; the handler
 * runs in the page span's context. Metrics: `docket.runs.started`, `docket.runs.settled`, `docket.page.duration` and
 * `docket.run.queue_time` (seconds). Without a registered SDK every call is OpenTelemetry's no-op.
 */
export function otelTelemetry(options: OtelTelemetryOptions = {}): DocketTelemetry {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE);
  const instruments: Instruments = {
    started: meter.createCounter('docket.runs.started', { description: 'Runs created by starts', unit: '{run}' }),
    settled: meter.createCounter('docket.runs.settled', {
      description: 'Runs that reached a terminal status, by task and status',
      unit: '{run}',
    }),
    pageDuration: meter.createHistogram('docket.page.duration', {
      description: 'How long a page took from its claim to its settle',
      unit: 's',
    }),
    queueTime: meter.createHistogram('docket.run.queue_time', {
      description: 'How long a run waited from due to claimed',
      unit: 's',
    }),
  };
  const tasks = new TaskAttributes();
  const settled = new SettledCounts(instruments.settled);
  const metered = instruments.started.constructor !== NOOP_COUNTER;
  const traced = tracesRecorded(options.tracerProvider ?? trace.getTracerProvider());
  return {
    tracer: {
      startSpan: (info) => startSpan(tracer, instruments, tasks.of(info.task), info),
      pageSpan: (info) => pageSpan(tracer, instruments, tasks, info),
      settled: (info) => settled.add(tasks.withStatus(info.task, info.status)),
      active: () => metered || traced(),
    },
  };
}

/** The class of OpenTelemetry's no-op counter: a meter provider that makes them records nothing. */
const NOOP_COUNTER = createNoopMeter().createCounter('docket.noop').constructor;

/** The tracer provider OpenTelemetry's global proxy delegates to until an SDK registers one. */
const NOOP_TRACERS = new ProxyTracerProvider().getDelegate();

/**
 * Whether spans of `provider` are recorded now: always for a provider of its own; for OpenTelemetry's global proxy,
 * once an SDK has registered the provider it delegates to (which may happen after the queue was created).
 */
function tracesRecorded(provider: TracerProvider): () => boolean {
  if (!(provider instanceof ProxyTracerProvider)) return () => true;
  return () => provider.getDelegate() !== NOOP_TRACERS;
}

/** One task's attributes, and with each status it settled in; made once, read on every page. */
interface TaskEntry {
  attributes: Attributes;
  byStatus: Map<string, Attributes>;
}

/**
 * The attributes of each task, and of each task and status, made once: every page records two metrics with them, and
 * a new object (or a key string to find one) per page was a measurable part of tracing's cost.
 */
class TaskAttributes {
  /** By task name, then version. */
  private readonly tasks = new Map<string, Map<string, TaskEntry>>();

  /** `docket.task.name` and `docket.task.version`. */
  of(task: { name: string; version: string }): Attributes {
    return this.entry(task).attributes;
  }

  /** The task's attributes and `docket.run.status`. */
  withStatus(task: { name: string; version: string }, status: string): Attributes {
    const entry = this.entry(task);
    let found = entry.byStatus.get(status);
    if (found === undefined) {
      found = Object.freeze({ ...entry.attributes, 'docket.run.status': status });
      entry.byStatus.set(status, found);
    }
    return found;
  }

  private entry(task: { name: string; version: string }): TaskEntry {
    let versions = this.tasks.get(task.name);
    if (versions === undefined) {
      versions = new Map();
      this.tasks.set(task.name, versions);
    }
    let found = versions.get(task.version);
    if (found === undefined) {
      const attributes = Object.freeze({ 'docket.task.name': task.name, 'docket.task.version': task.version });
      found = { attributes, byStatus: new Map() };
      versions.set(task.version, found);
    }
    return found;
  }
}

/**
 * `docket.runs.settled`, added once per attribute set for all the runs that settled in one stretch of synchronous
 * work (a settle batch reports its runs one by one): the SDK hashes the attribute set on every `add`. The counts reach
 * the counter in a microtask, before any timer or I/O callback (a metric reader's collection) can run.
 */
class SettledCounts {
  private readonly pending = new Map<Attributes, number>();

  constructor(private readonly counter: Counter) {}

  /** One more run settled with `attributes`. */
  add(attributes: Attributes): void {
    if (this.pending.size === 0) queueMicrotask(() => this.flush());
    this.pending.set(attributes, (this.pending.get(attributes) ?? 0) + 1);
  }

  /** Outside the runtime's guard of the hooks: an SDK that throws is reported to OpenTelemetry's `diag` logger. */
  private flush(): void {
    const counts = [...this.pending];
    this.pending.clear();
    for (const [attributes, count] of counts) {
      try {
        this.counter.add(count, attributes);
      } catch (error) {
        diag.error('docket.runs.settled: the counter threw', error);
      }
    }
  }
}

/** `docket.start`: a producer span in the caller's context; its context is stored with the runs it creates. */
function startSpan(tracer: OtelTracer, instruments: Instruments, task: Attributes, info: StartSpanInfo): StartSpan {
  const span = tracer.startSpan('docket.start', START_OPTIONS);
  const recording = span.isRecording();
  if (recording) span.setAttributes({ ...task, 'docket.namespace': info.namespace, 'docket.count': info.count });
  return {
    traceParent: formatTraceParent(span.spanContext()),
    end(outcome) {
      if ('error' in outcome) {
        if (recording) failed(span, outcome.error);
      } else {
        if (recording) span.setAttribute('docket.created', outcome.created);
        if (outcome.created > 0) instruments.started.add(outcome.created, task);
      }
      span.end();
    },
  };
}

/** The options of every start span (its attributes are set once it is known to record). */
const START_OPTIONS = Object.freeze({ kind: SpanKind.PRODUCER });

/** `docket.page`: a consumer span linked to the run's start span, with the page's outcome as its status. */
function pageSpan(tracer: OtelTracer, instruments: Instruments, tasks: TaskAttributes, info: PageSpanInfo): PageSpan {
  const task = tasks.of(info.task);
  const span = tracer.startSpan('docket.page', PAGE_OPTIONS, ROOT_CONTEXT);
  const recording = span.isRecording();
  if (recording) {
    span.setAttributes({
      'docket.task.name': info.task.name,
      'docket.task.version': info.task.version,
      'docket.namespace': info.namespace,
      'docket.run_id': info.runId,
      'docket.page': info.page,
      'docket.attempt': info.attempt,
    });
    const start = parseTraceParent(info.traceParent);
    if (start !== null) span.addLink({ context: start });
  }
  if (info.dueAt !== null) instruments.queueTime.record(Math.max(0, info.claimedAt - info.dueAt) / 1000, task);
  const begun = performance.now();
  return {
    // Only a recording span needs the handler in its context (its children); a no-op one would only cost the call.
    ...(recording ? { around: <T>(body: () => T) => context.with(trace.setSpan(context.active(), span), body) } : {}),
    // The children this page starts store it: their page spans link to this one.
    traceParent: recording ? formatTraceParent(span.spanContext()) : null,
    end(outcome) {
      if (recording) ended(span, outcome);
      const status = outcome?.status ?? 'running';
      instruments.pageDuration.record((performance.now() - begun) / 1000, tasks.withStatus(info.task, status));
      span.end();
    },
  };
}

/** The options of every page span (its attributes and link are set once it is known to record). */
const PAGE_OPTIONS = Object.freeze({ kind: SpanKind.CONSUMER });

/** Sets a page span's status from how the page ended: an error when it failed or will be retried. */
function ended(span: Span, outcome: PageOutcome | null): void {
  if (outcome === null) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'the page commit failed in the store' });
    return;
  }
  span.setAttribute('docket.run.status', outcome.status);
  span.setAttribute('docket.reason', outcome.reason);
  if ((outcome.status === 'failed' || outcome.status === 'retrying') && outcome.error !== null) {
    span.setAttribute('docket.error.code', outcome.error.code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message });
  }
}

/** Marks a start span failed with the error it threw. */
function failed(span: Span, error: unknown): void {
  const err = error instanceof Error ? error : new Error(String(error));
  span.recordException(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
}
