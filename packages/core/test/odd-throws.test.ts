import { afterEach, describe, expect, it } from 'vitest';
import { createQueue, type Queue } from '../src/index.js';
import { memoryStore, waitFor } from '../src/testing/index.js';

/** Values a handler may throw whose own code throws when formatted or read. */
function oddValues(): [string, () => unknown][] {
  const hostile = () =>
    new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap: get');
        },
        getPrototypeOf: () => {
          throw new Error('trap: getPrototypeOf');
        },
        has: () => {
          throw new Error('trap: has');
        },
        ownKeys: () => {
          throw new Error('trap: ownKeys');
        },
      },
    );
  return [
    ['an object without a prototype', () => Object.create(null)],
    [
      'an object whose toString throws',
      () => ({
        toString() {
          throw new Error('no text');
        },
      }),
    ],
    [
      'an object whose code getter throws',
      () => ({
        get code() {
          throw new Error('no code');
        },
      }),
    ],
    [
      'an Error whose message getter throws',
      () =>
        Object.defineProperty(new Error('x'), 'message', {
          get() {
            throw new Error('no message');
          },
        }),
    ],
    ['a Proxy whose every trap throws', hostile],
    ['a symbol', () => Symbol('odd')],
  ];
}

describe('any thrown value', () => {
  const queues: Queue[] = [];
  afterEach(async () => {
    for (const queue of queues.splice(0)) await queue.close();
  });

  it.each(oddValues())('from a page (%s) fails the attempt with a bounded, safe error', async (_name, make) => {
    const queue = createQueue({ store: memoryStore(), logger: false, protocol: { pollMs: 10 } });
    queues.push(queue);
    const task = queue.define(
      { name: 'odd', version: '1', policy: { attempts: 1 } },
      {
        execute: () => {
          throw make();
        },
      },
    );
    await queue.ready();
    const { runId } = await task.start({ query: null });
    const run = await task.wait(runId, { timeoutMs: 10_000 });
    expect(run?.status).toBe('failed');
    expect(run?.reason).toBe('ATTEMPTS_EXHAUSTED');
    expect(run?.error?.code).toBe('BUSINESS_ERROR');
    expect(typeof run?.error?.message).toBe('string');
    expect((await queue.operator.health()).status).toBe('ready');
  });

  it.each(oddValues())('from a callback (%s) is a failed delivery, never a crash', async (_name, make) => {
    const queue = createQueue({
      store: memoryStore(),
      logger: false,
      protocol: { pollMs: 10 },
      defaults: { callbackPolicy: { attempts: 2, backoff: { baseMs: 1, maxMs: 1 } } },
    });
    queues.push(queue);
    const task = queue.define(
      { name: 'odd-callback', version: '1', events: ['success'] },
      {
        execute: (ctx) => ctx.end(),
        onSuccess: () => {
          throw make();
        },
      },
    );
    await queue.ready();
    const { runId } = await task.start({ query: null });
    await waitFor(
      async () => (await queue.operator.deadLetters.list()).items.some((d) => d.runId === runId),
      'the dead letter',
    );
    const [dead] = (await queue.operator.deadLetters.list()).items;
    expect(dead?.error?.code).toBe('BUSINESS_ERROR');
    expect((await task.get(runId))?.status).toBe('success');
  });
});
