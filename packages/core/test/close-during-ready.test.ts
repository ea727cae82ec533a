import { describe, expect, it } from 'vitest';
import { createQueue, DocketError } from '../src/index.js';
import { memoryStore } from '../src/testing/index.js';

describe('close() during ready()', () => {
  it('stops the start: ready() rejects with QUEUE_CLOSING, nothing is claimed and no handler runs', async () => {
    const store = memoryStore();
    const producer = createQueue({ store, runtime: { mode: 'producer' } });
    const produced = producer.define({ name: 'early', version: '1' });
    await producer.ready();
    const { runId } = await produced.start({ query: null });

    let executed = 0;
    const consumer = createQueue({ store, runtime: { mode: 'consumer' }, protocol: { pollMs: 10 } });
    consumer.define(
      { name: 'early', version: '1' },
      {
        execute(ctx) {
          executed++;
          return ctx.end();
        },
      },
    );
    const ready = consumer.ready();
    const closed = await consumer.close();
    const refused = await ready.then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(DocketError);
    expect((refused as DocketError).code).toBe('QUEUE_CLOSING');
    expect(closed).toEqual({ status: 'closed', timedOut: false, remainingExecutions: 0, remainingCallbacks: 0 });
    expect(consumer.state).toBe('closed');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(executed).toBe(0);
    expect(store.raw.run('default', runId)?.status).toBe('pending');
    expect(store.raw.history('default', runId).map((entry) => entry.reason)).toEqual(['STARTED']);
    await producer.close();
  });
});
