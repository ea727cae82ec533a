import { DocketError } from './errors.js';

/** True when `value` looks like a promise. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

/**
 * Continues with `fn(value)` now when `value` is plain, after it resolves when it is a promise and `allowAsync`, and
 * refuses a promise with `HANDLER_CONTRACT_INVALID` when the store's transactions are synchronous.
 */
export function step<A, B>(value: A | PromiseLike<A>, allowAsync: boolean, what: string, fn: (a: A) => B): B {
  if (!isThenable(value)) return fn(value);
  if (!allowAsync) {
    Promise.resolve(value).catch(() => undefined);
    throw new DocketError(
      'HANDLER_CONTRACT_INVALID',
      `${what} returned a promise, but this store's transactions are synchronous: do async work before ctx.next/ctx.end`,
      { operation: 'commit' },
    );
  }
  // Typed as B for the caller's chain: on an async store the plan returns this promise of B, and the store awaits it.
  return Promise.resolve(value).then(fn) as B;
}
