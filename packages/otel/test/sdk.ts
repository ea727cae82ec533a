import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** One metric's data points as the in-memory exporter collected them. */
export interface Points {
  name: string;
  points: { attributes: Record<string, unknown>; value: unknown }[];
}

/** The OpenTelemetry SDK with in-memory span and metric exporters, as a test reads them. */
export function inMemorySdk() {
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    spans: (name?: string): ReadableSpan[] =>
      spanExporter.getFinishedSpans().filter((span) => name === undefined || span.name === name),
    /** Every metric collected so far, by name. */
    async metrics(): Promise<Map<string, Points>> {
      await reader.forceFlush();
      const byName = new Map<string, Points>();
      for (const resource of metricExporter.getMetrics()) {
        for (const scope of resource.scopeMetrics) {
          for (const metric of scope.metrics) {
            byName.set(metric.descriptor.name, {
              name: metric.descriptor.name,
              points: metric.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value })),
            });
          }
        }
      }
      return byName;
    },
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}
