import type { Backoff } from './run-types.js';

/**
 * The delay before retry n (n = failures of the page so far, from 1), full jitter:
 * `floor(random * (min(maxMs, baseMs * 2^(n-1)) + 1))`, so it lies in `[0, min(maxMs, baseMs * 2^(n-1))]`.
 * `random` is in `[0, 1)`; callers pass `Math.random()`, tests pass fixed values.
 */
export function retryDelayMs(backoff: Pick<Backoff, 'baseMs' | 'maxMs'>, failure: number, random: number): number {
  const exponent = Math.max(0, failure - 1);
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(exponent, 52));
  return Math.floor(random * (ceiling + 1));
}
