import { NonRetryableError, RetryAfterError } from '../util/retry-errors.js';
import { safeInstanceOf, safeProp } from '../util/safe-error.js';

/** The longest a `retryAfterMs` may push the next attempt out: one hour. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** Provider HTTP statuses of a request that cannot succeed as sent. */
const FINAL_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 404, 422]);

/** How a handler's error bears on the next attempt: none at all, or not before `retryAfterMs`. */
export interface RetryClass {
  nonRetryable: boolean;
  /** Milliseconds the next attempt waits at least (capped at one hour), or `null`. */
  retryAfterMs: number | null;
  /** What waits that long: the run, or (a `RetryAfterError`'s `hold`) its whole group or task. */
  hold: 'run' | 'group' | 'task';
}

/**
 * Classifies a handler's error (and the causes it wraps): `NonRetryableError`, a provider's `PROVIDER_HTTP_ERROR`
 * with status 400, 401, 403, 404 or 422, and `PROVIDER_CONFIG_INVALID` are final; a numeric `retryAfterMs` (own
 * property or `details.retryAfterMs`) delays the next attempt. Pure.
 */
export function classifyRetry(error: unknown): RetryClass {
  let nonRetryable = false;
  let retryAfterMs: number | null = null;
  let hold: RetryClass['hold'] = 'run';
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    if (!nonRetryable) nonRetryable = isFinal(current);
    if (retryAfterMs === null) {
      retryAfterMs = retryAfterOf(current);
      if (retryAfterMs !== null) hold = holdOf(current);
    }
    current = safeProp(current, 'cause');
  }
  return { nonRetryable, retryAfterMs, hold };
}

/** A `RetryAfterError`'s `hold` (`'group'` or `'task'`), else `'run'`. */
function holdOf(error: object): RetryClass['hold'] {
  if (!safeInstanceOf(error, RetryAfterError)) return 'run';
  const hold = safeProp(error, 'hold');
  return hold === 'group' || hold === 'task' ? hold : 'run';
}

function isFinal(error: object): boolean {
  if (safeInstanceOf(error, NonRetryableError)) return true;
  const code = safeProp(error, 'code');
  if (code === 'PROVIDER_CONFIG_INVALID') return true;
  const status = safeProp(safeProp(error, 'details'), 'status');
  return code === 'PROVIDER_HTTP_ERROR' && typeof status === 'number' && FINAL_STATUSES.has(status);
}

function retryAfterOf(error: object): number | null {
  const own = safeProp(error, 'retryAfterMs');
  const detail = safeProp(safeProp(error, 'details'), 'retryAfterMs');
  const value = typeof own === 'number' ? own : typeof detail === 'number' ? detail : null;
  if (value === null || !Number.isFinite(value) || value < 0) return null;
  return Math.min(Math.ceil(value), MAX_RETRY_AFTER_MS);
}
