import { DocketError, type DocketErrorCode } from '@docket/core';

/** Replaces every occurrence of each secret in `text` with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out;
}

function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redact(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, secrets));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, secrets)]));
  }
  return value;
}

/** A provider `DocketError` whose message and details never contain a secret; driver errors are kept only as text. */
export function providerError(
  code: DocketErrorCode,
  message: string,
  secrets: readonly string[],
  init: { retryable?: boolean; details?: Record<string, unknown>; cause?: unknown } = {},
): DocketError {
  const details = init.details ? (redactValue(init.details, secrets) as Record<string, unknown>) : undefined;
  const cause =
    init.cause === undefined
      ? undefined
      : redact(init.cause instanceof Error ? `${init.cause.name}: ${init.cause.message}` : String(init.cause), secrets);
  return new DocketError(code, redact(message, secrets), {
    operation: 'provider.generate',
    ...(init.retryable === undefined ? {} : { retryable: init.retryable }),
    ...(details === undefined ? {} : { details }),
    ...(cause === undefined ? {} : { cause }),
  });
}
