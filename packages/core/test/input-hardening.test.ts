import { afterEach, describe, expect, it } from 'vitest';
import { createQueue, type DocketErrorCode, isDocketError, type Queue } from '../src/index.js';
import { memoryStore } from '../src/testing/index.js';

const PROTOTYPE_NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];
/** `{ [name]: 1 }` as JSON.parse makes it: `__proto__` an own key, not the prototype. */
const withKey = (name: string, base: Record<string, unknown> = {}) => ({ ...base, ...JSON.parse(`{"${name}": 1}`) });

async function code(call: () => unknown): Promise<DocketErrorCode | 'none'> {
  try {
    await call();
    return 'none';
  } catch (error) {
    return isDocketError(error) ? error.code : 'none';
  }
}

describe('inputs that must be refused', () => {
  const queues: Queue[] = [];
  afterEach(async () => {
    for (const queue of queues.splice(0)) await queue.close();
  });

  async function producer() {
    const store = memoryStore();
    const queue = createQueue({ store, runtime: { mode: 'producer' } });
    queues.push(queue);
    const task = queue.define({ name: 'hard', version: '1' });
    await queue.ready();
    return { store, queue, task };
  }

  it('refuses unknown keys named like Object.prototype members, and arrays, in every options object', async () => {
    for (const name of PROTOTYPE_NAMES) {
      expect(await code(() => createQueue(withKey(name, { store: memoryStore() }) as never)), name).toBe(
        'CONFIG_INVALID',
      );
      expect(await code(() => createQueue({ store: memoryStore(), runtime: withKey(name) as never })), name).toBe(
        'CONFIG_INVALID',
      );
    }
    expect(await code(() => createQueue({ store: memoryStore(), runtime: [] as never }))).toBe('CONFIG_INVALID');
    expect(await code(() => createQueue({ store: memoryStore(), protocol: [] as never }))).toBe('CONFIG_INVALID');
    const { store, queue, task } = await producer();
    const { runId } = await task.start({ query: 1 });
    for (const name of PROTOTYPE_NAMES) {
      expect(await code(() => queue.define(withKey(name, { name: `d-${name.length}`, version: '1' }) as never))).toBe(
        'CONFIG_INVALID',
      );
      expect(await code(() => task.start(withKey(name, { query: 1 }) as never)), name).toBe('CONFIG_INVALID');
      const command = { runId, expectedRevision: 1, reason: 'r', commandId: `c-${name}` };
      expect(await code(() => queue.operator.runs.cancel(withKey(name, command) as never)), name).toBe(
        'CONFIG_INVALID',
      );
      expect(await code(() => queue.operator.runs.list(withKey(name) as never)), name).toBe('CONFIG_INVALID');
    }
    expect(store.raw.runCount()).toBe(1);
  });

  it('keeps an own __proto__ key in the canonical form: another __proto__ payload is another input', async () => {
    const { task } = await producer();
    const first = await task.start({ query: JSON.parse('{"__proto__": {"a": 1}}'), idempotencyKey: 'k' });
    expect(first.created).toBe(true);
    const same = await task.start({ query: JSON.parse('{"__proto__": {"a": 1}}'), idempotencyKey: 'k' });
    expect(same).toEqual({ runId: first.runId, created: false });
    expect(await code(() => task.start({ query: JSON.parse('{"__proto__": {"a": 2}}'), idempotencyKey: 'k' }))).toBe(
      'IDEMPOTENCY_CONFLICT',
    );
  });

  it('tells a redelivered event with another __proto__ payload from a duplicate, and never freezes the caller payload', async () => {
    const store = memoryStore();
    const queue = createQueue({ store, runtime: { concurrency: 0 } });
    queues.push(queue);
    const task = queue.define({ name: 'ev', version: '1' }, { execute: (ctx) => ctx.end(), validateEvent: () => true });
    await queue.ready();
    const { runId } = await task.start({ query: 1, trigger: { event: 'go' } });
    const payload = JSON.parse('{"__proto__": {"x": 1}, "n": 1}');
    expect(await queue.events.deliver(runId, { id: 'e1', type: 'go', payload })).toMatchObject({ accepted: true });
    expect(Object.isFrozen(payload)).toBe(false);
    payload.n = 2; // still the caller's to change
    const again = JSON.parse('{"__proto__": {"x": 1}, "n": 1}');
    expect(await queue.events.deliver(runId, { id: 'e1', type: 'go', payload: again })).toMatchObject({
      duplicate: true,
    });
    const changed = JSON.parse('{"__proto__": {"x": 2}, "n": 1}');
    expect(await code(() => queue.events.deliver(runId, { id: 'e1', type: 'go', payload: changed }))).toBe(
      'EVENT_CONFLICT',
    );
  });

  it('refuses impossible calendar times, unknown task.run options, and keys, ids and reasons that are not clean text', async () => {
    const { store, queue, task } = await producer();
    for (const at of ['2027-02-30T00:00:00Z', '2027-13-01T00:00:00Z', '2027-01-01T24:00:00Z', '2027-01-01T10:60:00Z']) {
      expect(await code(() => task.start({ query: 1, trigger: { at } })), at).toBe('CONFIG_INVALID');
    }
    expect(await task.start({ query: 1, trigger: { at: '2028-02-29T00:00:00+08:00' } })).toMatchObject({
      created: true,
    });
    const consumer = createQueue({ store, runtime: { concurrency: 0 } });
    queues.push(consumer);
    const runner = consumer.define({ name: 'hard', version: '1' }, { execute: (ctx) => ctx.end() });
    await consumer.ready();
    expect(await code(() => runner.run('0'.repeat(32), { waitMs: 0, wait: 5 } as never))).toBe('CONFIG_INVALID');
    const before = store.raw.runCount();
    for (const bad of ['lone \uD800 surrogate', 'nul \u0000 inside']) {
      expect(await code(() => task.start({ query: 1, idempotencyKey: bad })), bad).toBe('CONFIG_INVALID');
      const command = { runId: '0'.repeat(32), expectedRevision: 1, reason: bad, commandId: 'c' };
      expect(await code(() => queue.operator.runs.cancel(command)), bad).toBe('CONFIG_INVALID');
      expect(await code(() => queue.operator.runs.cancel({ ...command, reason: 'r', commandId: bad })), bad).toBe(
        'CONFIG_INVALID',
      );
      // An event id that is not clean text is a malformed event: it fails a waiting run (here there is none).
      expect(await queue.events.deliver('0'.repeat(32), { id: bad, type: 't' }), bad).toEqual({
        accepted: false,
        duplicate: false,
        status: null,
      });
    }
    expect(store.raw.runCount()).toBe(before);
  });
});

describe('a custom store whose open() throws', () => {
  it('makes ready() reject with CONNECTION_UNAVAILABLE, the store error kept as the cause', async () => {
    const store = memoryStore();
    const broken = Object.assign(Object.create(store) as typeof store, {
      name: 'custom',
      open: async () => {
        throw new Error('disk not mounted');
      },
    });
    const queue = createQueue({ store: broken, runtime: { mode: 'producer' } });
    const error = await queue.ready().catch((e: unknown) => e);
    expect(isDocketError(error, 'CONNECTION_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toContain('disk not mounted');
    expect(((error as Error).cause as Error).message).toBe('disk not mounted');
    await queue.close();
  });
});

describe('a value read once: what is checked is what is stored', () => {
  /** An object whose `note` is short when first read and 100 KB on every later read. */
  function growingNote() {
    let reads = 0;
    return {
      get note() {
        reads++;
        return reads === 1 ? 'short' : 'x'.repeat(100_000);
      },
    };
  }

  it('stores the query it checked against queryBytes, and refuses arrays with extra keys', async () => {
    const store = memoryStore();
    const queue = createQueue({ store, runtime: { mode: 'producer' }, limits: { queryBytes: 1024 } });
    const task = queue.define({ name: 'once', version: '1' });
    await queue.ready();
    try {
      const { runId } = await task.start({ query: growingNote() });
      expect((await task.get(runId))?.query).toEqual({ note: 'short' });
      expect(JSON.stringify(store.raw.run('default', runId)?.query)).toBe('{"note":"short"}');
      const list = Object.assign(['a'], { hidden: 'dropped by JSON' });
      expect(await code(() => task.start({ query: list }))).toBe('JSON_INVALID');
      expect(store.raw.runCount()).toBe(1);
    } finally {
      await queue.close();
    }
  });

  it('stores the state ctx.next was given as it was checked against stateBytes', async () => {
    const store = memoryStore();
    const queue = createQueue({ store, limits: { stateBytes: 1024 }, protocol: { pollMs: 10 } });
    let seen: unknown;
    const task = queue.define<null, unknown>(
      { name: 'state-once', version: '1' },
      {
        execute: (ctx) => {
          if (ctx.state === null) return ctx.next(growingNote());
          seen = ctx.state;
          return ctx.end();
        },
      },
    );
    await queue.ready();
    try {
      const { runId } = await task.start({ query: null });
      const done = await task.wait(runId, { timeoutMs: 10_000 });
      expect(done?.status).toBe('success');
      expect(seen).toEqual({ note: 'short' });
    } finally {
      await queue.close();
    }
  });
});

describe('starts and schedules at the edges', () => {
  it('refuses a sparse startMany array and a cron that never fires with CONFIG_INVALID, writing nothing', async () => {
    const store = memoryStore();
    const queue = createQueue({ store, runtime: { mode: 'producer' } });
    const task = queue.define({ name: 'edges', version: '1' });
    await queue.ready();
    try {
      // biome-ignore lint/suspicious/noSparseArray: a hole is exactly what this case feeds in.
      const sparse = [{ query: 1 }, , { query: 3 }];
      expect(await code(() => task.startMany(sparse as never))).toBe('CONFIG_INVALID');
      expect(await code(() => task.startMany(new Array(3) as never))).toBe('CONFIG_INVALID');
      for (const cron of ['0 0 31 2 *', '0 0 30 2 *']) {
        expect(await code(() => task.schedule('never', { cron, query: null })), cron).toBe('CONFIG_INVALID');
      }
      expect(store.raw.runCount()).toBe(0);
      expect((await queue.operator.schedules.list()).items).toEqual([]);
    } finally {
      await queue.close();
    }
  });
});
