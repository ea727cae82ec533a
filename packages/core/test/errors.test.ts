import * as v from 'valibot';
import { afterEach, describe, expect, it } from 'vitest';
import { createQueue, type DocketErrorCode, ERROR_CODES, isDocketError, type Queue } from '../src/index.js';
import { memoryStore } from '../src/store/index.js';

/** Runs `fn`, expects a DocketError with `code`, and returns it. */
async function expectCode(code: DocketErrorCode, fn: () => unknown) {
  let caught: unknown;
  try {
    await fn();
  } catch (error) {
    caught = error;
  }
  expect(isDocketError(caught), `expected a DocketError ${code}, got ${String(caught)}`).toBe(true);
  expect((caught as { code: string }).code).toBe(code);
  return caught as { code: string; retryable: boolean; outcomeKnown: boolean; operation: string; details?: unknown };
}

const queues: Queue<unknown>[] = [];
afterEach(async () => {
  for (const q of queues.splice(0)) await q.close();
});

async function producer(store = memoryStore(), extra: Record<string, unknown> = {}) {
  const queue = createQueue({ store, runtime: { mode: 'producer' }, ...extra });
  const task = queue.define<unknown>({ name: 'errs', version: '1', schema: { query: v.object({ n: v.number() }) } });
  await queue.ready();
  queues.push(queue as Queue<unknown>);
  return { store, queue, task };
}

describe('DocketError', () => {
  it('gives every code one retryable flag and marks only OUTCOME_UNKNOWN as outcome unknown', () => {
    expect(Object.keys(ERROR_CODES)).toHaveLength(30);
    for (const code of Object.keys(ERROR_CODES)) expect(code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
  });
});

describe('CONFIG_INVALID', () => {
  const store = memoryStore();
  it.each([
    ['an unknown key', { store, colour: 'red' }],
    ['a null option', { store, runtime: null }],
    ['a wrong type', { store, runtime: { concurrency: '4' } }],
    ['a bad namespace', { store, namespace: '-bad' }],
    ['a namespace over 128 bytes', { store, namespace: 'a'.repeat(129) }],
    ['a lease under 3000 ms', { store, protocol: { leaseMs: 1000 } }],
    ['a heartbeat over leaseMs/3', { store, protocol: { leaseMs: 3000, heartbeatMs: 1500 } }],
    ['maxMs below baseMs', { store, defaults: { policy: { backoff: { baseMs: 100, maxMs: 10 } } } }],
    ['attempts out of bounds', { store, defaults: { policy: { attempts: 0 } } }],
    ['callbackConcurrency out of bounds', { store, runtime: { callbackConcurrency: 2000 } }],
    ['a missing store', {}],
    ['not an object', null],
  ])('createQueue refuses %s', async (_name, options) => {
    const error = await expectCode('CONFIG_INVALID', () => createQueue(options as never));
    expect(error.operation).toBe('createQueue');
    expect(error.retryable).toBe(false);
  });

  it('refuses define after ready, a duplicate name, a bad definition and bad handlers', async () => {
    const queue = createQueue({ store: memoryStore() });
    queues.push(queue);
    await expectCode('CONFIG_INVALID', () =>
      queue.define({ name: 'x', version: '1', colour: 1 } as never, { execute: (c) => c.end() }),
    );
    await expectCode('CONFIG_INVALID', () => queue.define({ name: 'x y', version: '1' }, { execute: (c) => c.end() }));
    await expectCode('CONFIG_INVALID', () =>
      queue.define({ name: 'x', version: '1' }, {
        execute: (c: { end(): unknown }) => c.end(),
        other: () => 1,
      } as never),
    );
    await expectCode('CONFIG_INVALID', () => queue.define({ name: 'x', version: '1' }));
    queue.define({ name: 'x', version: '1' }, { execute: (c) => c.end() });
    await expectCode('CONFIG_INVALID', () => queue.define({ name: 'x', version: '2' }, { execute: (c) => c.end() }));
    await queue.ready();
    await expectCode('CONFIG_INVALID', () => queue.define({ name: 'y', version: '1' }, { execute: (c) => c.end() }));
  });

  it('refuses a malformed start input and writes nothing', async () => {
    const { store, task } = await producer();
    const before = store.raw.dump();
    await expectCode('CONFIG_INVALID', () => task.start({ query: { n: 1 }, extra: 1 } as never));
    await expectCode('CONFIG_INVALID', () => task.start({ query: { n: 1 }, trigger: { at: '2026-01-01T00:00:00' } }));
    await expectCode('CONFIG_INVALID', () => task.start({ query: { n: 1 }, idempotencyKey: '' }));
    await expectCode('CONFIG_INVALID', () => task.start({ query: { n: 1 }, limits: { modelCalls: -1 } }));
    expect(store.raw.dump()).toBe(before);
  });
});

describe('queue lifecycle codes', () => {
  it('QUEUE_NOT_READY before ready(), QUEUE_CLOSING during close, QUEUE_CLOSED after', async () => {
    const store = memoryStore();
    let release!: () => void;
    const queue = createQueue({ store, runtime: { closeGraceMs: 5000 }, protocol: { pollMs: 5 } });
    let started = false;
    const task = queue.define(
      { name: 'life', version: '1' },
      {
        async execute(ctx) {
          started = true;
          await new Promise<void>((r) => {
            release = r;
          });
          return ctx.end();
        },
      },
    );
    await expectCode('QUEUE_NOT_READY', () => task.start({ query: 1 }));
    expect(store.raw.runCount()).toBe(0);
    await queue.ready();
    const { runId } = await task.start({ query: 1 });
    while (!started) await new Promise((r) => setTimeout(r, 5));
    const closing = queue.close();
    expect(queue.state).toBe('closing');
    const before = store.raw.dump();
    await expectCode('QUEUE_CLOSING', () => task.start({ query: 2 }));
    await expectCode('QUEUE_CLOSING', () => task.get(runId));
    expect(store.raw.dump()).toBe(before);
    release();
    await closing;
    await expectCode('QUEUE_CLOSED', () => task.start({ query: 3 }));
    await expectCode('QUEUE_CLOSED', () => queue.ready());
    expect(store.raw.run('default', runId)?.status).toBe('success');
  });

  it('QUEUE_FAILED after ready() failed with DEFINITION_HASH_CONFLICT', async () => {
    const store = memoryStore();
    const a = createQueue({ store, runtime: { mode: 'producer' } });
    a.define({ name: 'same', version: '1', policy: { attempts: 2 } });
    await a.ready();
    queues.push(a);
    const b = createQueue({ store, runtime: { mode: 'producer' } });
    const task = b.define({ name: 'same', version: '1', policy: { attempts: 3 } });
    const conflict = await expectCode('DEFINITION_HASH_CONFLICT', () => b.ready());
    expect(conflict.retryable).toBe(false);
    expect(b.state).toBe('failed');
    const before = store.raw.dump();
    await expectCode('QUEUE_FAILED', () => task.start({ query: 1 }));
    expect(store.raw.dump()).toBe(before);
  });
});

describe('MODE_OPERATION_NOT_ALLOWED', () => {
  it('refuses start on a consumer, handlers on a producer, and run on a producer', async () => {
    const store = memoryStore();
    const consumer = createQueue({ store, runtime: { mode: 'consumer' } });
    const ctask = consumer.define({ name: 'm', version: '1' }, { execute: (c) => c.end() });
    await consumer.ready();
    queues.push(consumer);
    const before = store.raw.dump();
    await expectCode('MODE_OPERATION_NOT_ALLOWED', () => ctask.start({ query: 1 }));
    expect(store.raw.dump()).toBe(before);
    const prod = createQueue({ store, runtime: { mode: 'producer' } });
    await expectCode('MODE_OPERATION_NOT_ALLOWED', () =>
      prod.define({ name: 'm', version: '1' }, { execute: (c) => c.end() }),
    );
    const ptask = prod.define({ name: 'm', version: '1' });
    await prod.ready();
    queues.push(prod);
    const { runId } = await ptask.start({ query: 1 });
    await expectCode('MODE_OPERATION_NOT_ALLOWED', () => ptask.run(runId));
  });
});

describe('JSON_INVALID and PAYLOAD_TOO_LARGE', () => {
  it.each([
    ['undefined', undefined],
    ['a function', () => 1],
    ['NaN', Number.NaN],
    ['a Date', new Date()],
    ['a BigInt', 10n],
  ])('refuses a query with %s and writes nothing', async (_name, value) => {
    const { store, task } = await producer();
    const before = store.raw.dump();
    await expectCode('JSON_INVALID', () => task.start({ query: { n: value } }));
    expect(store.raw.dump()).toBe(before);
  });

  it('refuses a query that fails schema.query with the valibot issues in details', async () => {
    const { store, task } = await producer();
    const before = store.raw.dump();
    const error = await expectCode('JSON_INVALID', () => task.start({ query: { n: 'one' } }));
    expect(JSON.stringify(error.details)).toContain('n');
    expect(store.raw.dump()).toBe(before);
  });

  it('refuses a malformed run id', async () => {
    const { task } = await producer();
    await expectCode('JSON_INVALID', () => task.get('not-an-id'));
    await expectCode('JSON_INVALID', () => task.cancel('ABCDEF'.repeat(6)));
    await expectCode('JSON_INVALID', () => task.history(42 as never));
  });

  it('refuses a query over queryBytes with PAYLOAD_TOO_LARGE and writes nothing', async () => {
    const { store, task } = await producer(memoryStore(), { limits: { queryBytes: 100 } });
    const before = store.raw.dump();
    await expectCode('PAYLOAD_TOO_LARGE', () => task.start({ query: { n: 1, pad: 'x'.repeat(200) } }));
    expect(store.raw.dump()).toBe(before);
  });

  it('fails the page when ctx.next is given a state that is not JSON', async () => {
    const store = memoryStore();
    const queue = createQueue({ store, protocol: { pollMs: 5 } });
    const task = queue.define(
      { name: 'badstate', version: '1', policy: { attempts: 1 } },
      { execute: (ctx) => ctx.next({ when: new Date() } as never) },
    );
    await queue.ready();
    queues.push(queue);
    const { runId } = await task.start({ query: 1 });
    while ((await task.get(runId))?.status !== 'failed') await new Promise((r) => setTimeout(r, 5));
    expect((await task.get(runId))?.error?.code).toBe('JSON_INVALID');
  });
});

describe('identity, capacity and idempotency codes', () => {
  it('TASK_IDENTITY_MISMATCH for a run of another task', async () => {
    const store = memoryStore();
    const queue = createQueue({ store, runtime: { mode: 'producer' } });
    const a = queue.define({ name: 'a', version: '1' });
    const b = queue.define({ name: 'b', version: '1' });
    await queue.ready();
    queues.push(queue);
    const { runId } = await a.start({ query: 1 });
    const before = store.raw.dump();
    await expectCode('TASK_IDENTITY_MISMATCH', () => b.get(runId));
    await expectCode('TASK_IDENTITY_MISMATCH', () => b.cancel(runId));
    await expectCode('TASK_IDENTITY_MISMATCH', () => b.history(runId));
    expect(store.raw.dump()).toBe(before);
  });

  it('CAPACITY_EXCEEDED at limits.maxRuns', async () => {
    const { store, task } = await producer(memoryStore(), { limits: { maxRuns: 2 } });
    await task.start({ query: { n: 1 } });
    await task.start({ query: { n: 2 } });
    const before = store.raw.dump();
    const error = await expectCode('CAPACITY_EXCEEDED', () => task.start({ query: { n: 3 } }));
    expect(error.retryable).toBe(true);
    expect(store.raw.dump()).toBe(before);
  });

  it('IDEMPOTENCY_CONFLICT leaves the store unchanged', async () => {
    const { store, task } = await producer();
    await task.start({ query: { n: 1 }, idempotencyKey: 'k' });
    const before = store.raw.dump();
    await expectCode('IDEMPOTENCY_CONFLICT', () => task.start({ query: { n: 2 }, idempotencyKey: 'k' }));
    expect(store.raw.dump()).toBe(before);
  });
});

describe('task.run argument checks', () => {
  it('refuses a bad waitMs or signal with CONFIG_INVALID', async () => {
    const store = memoryStore();
    const queue = createQueue({ store, runtime: { mode: 'consumer' } });
    const task = queue.define({ name: 'r', version: '1' }, { execute: (c) => c.end() });
    await queue.ready();
    queues.push(queue);
    await expectCode('CONFIG_INVALID', () => task.run('a'.repeat(32), { waitMs: -1 }));
    await expectCode('CONFIG_INVALID', () => task.run('a'.repeat(32), { waitMs: 3_600_001 }));
    await expectCode('CONFIG_INVALID', () => task.run('a'.repeat(32), { signal: {} as never }));
  });
});
