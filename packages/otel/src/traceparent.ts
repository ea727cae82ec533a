import { isSpanContextValid, type SpanContext, TraceFlags } from '@opentelemetry/api';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A span context as a W3C `traceparent` (version 00), or `null` for an invalid (non-recording, no-op) context. */
export function formatTraceParent(context: SpanContext): string | null {
  if (!isSpanContextValid(context)) return null;
  const flags = (context.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0');
  return `00-${context.traceId}-${context.spanId}-${flags}`;
}

/** The remote span context a stored `traceparent` names, or `null` when it is absent or not a valid one. */
export function parseTraceParent(traceParent: string | null): SpanContext | null {
  if (traceParent === null) return null;
  const match = TRACEPARENT.exec(traceParent);
  if (match === null) return null;
  const context: SpanContext = {
    traceId: match[1] as string,
    spanId: match[2] as string,
    traceFlags: Number.parseInt(match[3] as string, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  return isSpanContextValid(context) ? context : null;
}
