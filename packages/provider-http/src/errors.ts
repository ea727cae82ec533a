import { DocketError, type DocketErrorCode } from '@docket/core';

/**
 * Replaces every occurrence of each secret in `text` with `[redacted]`: the secret as it is, and as base64 (standard
 * or URL-safe) at any position of a longer encoded text (an upstream may echo `Basic` credentials or the key encoded).
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    for (const form of [secret, ...base64Forms(secret)]) out = out.split(form).join('[redacted]');
  }
  return out;
}

/**
 * The base64 texts that a secret's bytes become inside any base64-encoded text: for each of the three alignments
 * (0, 1 or 2 bytes before it), the characters that depend on the secret's bytes alone, in standard and URL-safe
 * form. Only long enough ones (8 characters and more), so that a short run of letters is never taken for a secret.
 */
export function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Set<string>();
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const start = offset === 0 ? 0 : offset + 1;
    const end = Math.floor((offset + bytes.length) / 3) * 4;
    const core = encoded.slice(start, end);
    if (core.length < 8) continue;
    forms.add(core);
    forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...forms];
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
