import { describe, expect, it } from 'vitest';
import { retryDelayMs } from './retry-policy.js';

describe('retryDelayMs', () => {
  const backoff = { baseMs: 1000, maxMs: 30_000 };
  it('follows floor(random * (min(maxMs, baseMs * 2^(n-1)) + 1))', () => {
    expect(retryDelayMs(backoff, 1, 0.999999)).toBe(1000);
    expect(retryDelayMs(backoff, 2, 0.999999)).toBe(2000);
    expect(retryDelayMs(backoff, 3, 0.5)).toBe(Math.floor(0.5 * 4001));
    expect(retryDelayMs(backoff, 10, 0.999999)).toBe(30_000);
    expect(retryDelayMs(backoff, 1, 0)).toBe(0);
  });
  it('does not overflow for very large failure counts', () => {
    expect(retryDelayMs(backoff, 5000, 0.999999)).toBe(30_000);
  });
});
