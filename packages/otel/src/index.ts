/**
 * `@docket/otel`: OpenTelemetry traces and metrics for a Docket queue, `createQueue({ telemetry: otelTelemetry() })`.
 */
export { type DocketTelemetry, type OtelTelemetryOptions, otelTelemetry } from './otel-telemetry.js';
export { formatTraceParent, parseTraceParent } from './traceparent.js';
