import {
  isTerminal,
  type PageOutcome,
  type PageSpan,
  type PageSpanInfo,
  type QueueOptions,
  type StartSpan,
  type StartSpanInfo,
  type TelemetryEvent,
  type Tracer,
} from '@docket/core';
import {
  type Attributes,
  type Counter,
  context,
  type Histogram,
  type MeterProvider,
  metrics,
  type Tracer as OtelTracer,
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
  /** The span hooks: `docket.start` and `docket.page`. */
  tracer: Tracer;
  /** Counts runs that reached a terminal status (`docket.runs.settled`). */
  sink: (event: TelemetryEvent) => void;
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
  return {
    tracer: {
      startSpan: (info) => startSpan(tracer, instruments, info),
      pageSpan: (info) => pageSpan(tracer, instruments, info),
    },
    sink: (event) => {
      if (event.type !== 'transition' || !isTerminal(event.entry.to)) return;
      instruments.settled.add(1, {
        'docket.task.name': event.task.name,
        'docket.task.version': event.task.version,
        'docket.run.status': event.entry.to,
      });
    },
  };
}

/** The attributes every span and metric of one task carries. */
function taskAttributes(task: { name: string; version: string }): Attributes {
  return { 'docket.task.name': task.name, 'docket.task.version': task.version };
}

/** `docket.start`: a producer span in the caller's context; its context is stored with the runs it creates. */
function startSpan(tracer: OtelTracer, instruments: Instruments, info: StartSpanInfo): StartSpan {
  const attributes = { ...taskAttributes(info.task), 'docket.namespace': info.namespace, 'docket.count': info.count };
  const span = tracer.startSpan('docket.start', { kind: SpanKind.PRODUCER, attributes });
  return {
    traceParent: formatTraceParent(span.spanContext()),
    end(outcome) {
      if ('error' in outcome) failed(span, outcome.error);
      else {
        span.setAttribute('docket.created', outcome.created);
        if (outcome.created > 0) instruments.started.add(outcome.created, taskAttributes(info.task));
      }
      span.end();
    },
  };
}

/** `docket.page`: a consumer span linked to the run's start span, with the page's outcome as its status. */
function pageSpan(tracer: OtelTracer, instruments: Instruments, info: PageSpanInfo): PageSpan {
  const task = taskAttributes(info.task);
  const start = parseTraceParent(info.traceParent);
  const span = tracer.startSpan(
    'docket.page',
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        ...task,
        'docket.namespace': info.namespace,
        'docket.run_id': info.runId,
        'docket.page': info.page,
        'docket.attempt': info.attempt,
      },
      links: start === null ? [] : [{ context: start }],
    },
    ROOT_CONTEXT,
  );
  if (info.dueAt !== null) instruments.queueTime.record(Math.max(0, info.claimedAt - info.dueAt) / 1000, task);
  const begun = performance.now();
  const active = trace.setSpan(context.active(), span);
  return {
    around: (body) => context.with(active, body),
    end(outcome) {
      ended(span, outcome);
      instruments.pageDuration.record((performance.now() - begun) / 1000, {
        ...task,
        'docket.run.status': outcome?.status ?? 'running',
      });
      span.end();
    },
  };
}

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
