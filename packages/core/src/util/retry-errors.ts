/** The brands of the two retry errors: registered symbols, the same in every copy of this package. */
const NON_RETRYABLE = Symbol.for('@docket/core/NonRetryableError');
const RETRY_AFTER = Symbol.for('@docket/core/RetryAfterError');

function branded(value: unknown, brand: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/** Thrown by a handler, ends the run `failed` / `NON_RETRYABLE` at once, whatever attempts are left. */
export class NonRetryableError extends Error {
  /** Recognises errors made by any copy of `@docket/core` in the process, by their brand. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return branded(value, NON_RETRYABLE);
  }

  override readonly name: string = 'NonRetryableError';

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    Object.defineProperty(this, NON_RETRYABLE, { value: true });
  }
}

/**
 * Thrown by a handler, makes the next attempt due no earlier than `retryAfterMs` from now (at most one hour). With
 * `hold: 'group' | 'task'`, no run of the run's group (or of its task) is claimed anywhere before then, and the run
 * goes back to `retrying` / `RATE_LIMITED` without consuming an attempt.
 */
export class RetryAfterError extends Error {
  /** Recognises errors made by any copy of `@docket/core` in the process, by their brand. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return branded(value, RETRY_AFTER);
  }

  override readonly name: string = 'RetryAfterError';
  /** How long to wait before the next attempt, in milliseconds. */
  readonly retryAfterMs: number;
  /** What waits: the run alone (the default), its whole group, or its whole task, fleet-wide. */
  readonly hold: 'run' | 'group' | 'task';

  constructor(message: string, options: { retryAfterMs: number; hold?: 'run' | 'group' | 'task'; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs;
    this.hold = options.hold ?? 'run';
    Object.defineProperty(this, RETRY_AFTER, { value: true });
  }
}
