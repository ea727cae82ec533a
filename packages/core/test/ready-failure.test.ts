import { describe, expect, it } from 'vitest';
import { createQueue, DocketError, isDocketError } from '../src/index.js';
import { memoryStore } from '../src/testing/index.js';
import { storeWith } from './run-fixture.js';

describe('ready() after a failed ready()', () => {
  it('meets QUEUE_FAILED, not retryable, with the first error as its cause; so does every call', async () => {
    const store = memoryStore();
    const refused = new DocketError('CONNECTION_UNAVAILABLE', 'the database is down', {
      operation: 'store.open',
      retryable: true,
    });
    const failing = storeWith(store, {
      open: () => Promise.reject(refused),
    });
    const queue = createQueue({ store: failing, runtime: { mode: 'producer' } });
    const task = queue.define({ name: 'never', version: '1' });
    const first = await queue.ready().then(
      () => null,
      (error: unknown) => error,
    );
    expect(isDocketError(first, 'CONNECTION_UNAVAILABLE')).toBe(true);
    const calls: (() => Promise<unknown>)[] = [() => queue.ready(), () => task.start({ query: 1 })];
    for (const call of calls) {
      const again = await Promise.resolve()
        .then(call)
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(isDocketError(again, 'QUEUE_FAILED')).toBe(true);
      expect((again as DocketError).retryable).toBe(false);
      expect((again as DocketError).cause).toBe(first);
    }
    await queue.close();
  });
});
