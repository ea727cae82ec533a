import { afterEach, describe, expect, it, vi } from 'vitest';
import { createQueue, DocketError, type Logger, NonRetryableError, type Queue, type Store } from '../src/index.js';
import { defaultLogger } from '../src/runtime/observe/logger.js';
import { planClaim } from '../src/store/index.js';
import { manualClock, memoryStore, waitFor, waitForStatus } from '../src/testing/index.js';

/** One line a capturing logger received. */
interface Line {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

/** A logger that keeps every line, as pino would receive them. */
function capture(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: Line['level']) =>
    (fields: object, message: string): void => {
      lines.push({ level, fields: fields as Record<string, unknown>, message });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * The store with `verb` failing its next `times` calls with a `STORAGE_FAILURE`: a fault at the store's boundary,
 * where a real database's failure would arrive.
 */
function failing(store: Store, verb: keyof Store, times: number): Store {
  let left = times;
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== verb || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (left > 0) {
          left--;
          return Promise.reject(new DocketError('STORAGE_FAILURE', `injected ${String(verb)} failure`));
        }
        return value.apply(target, args);
      };
    },
  });
}

const open: Queue[] = [];
afterEach(async () => {
  for (const queue of open.splice(0)) await queue.close();
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** A ready queue of one task `t@1` (tracked for closing after the test). */
async function queueOf(options: Parameters<typeof createQueue>[0], handlers: Parameters<Queue['define']>[1]) {
  const queue = createQueue(options);
  open.push(queue);
  const task = queue.define({ name: 't', version: '1', events: ['failure'] }, handlers);
  await queue.ready();
  return { queue, task };
}

describe('the logger', () => {
  it('logs a failing worker loop at error with its code, and its recovery at info', async () => {
    const log = capture();
    const store = failing(memoryStore(), 'claimDue', 3);
    const { task } = await queueOf({ store, logger: log, protocol: { pollMs: 10 } }, { execute: (ctx) => ctx.end() });
    const { runId } = await task.start({ query: null });
    await waitForStatus(task, runId, 'success');
    const failed = log.lines.find((line) => line.message === 'worker loop failed');
    expect(failed).toMatchObject({ level: 'error', fields: { loop: 'worker', code: 'STORAGE_FAILURE' } });
    expect(failed?.fields.err).toMatchObject({ message: 'injected claimDue failure' });
    expect(log.lines.find((line) => line.message === 'worker loop recovered')).toMatchObject({
      level: 'info',
      fields: { loop: 'worker', failures: 3 },
    });
  });

  it('logs a failing callback loop, schedule loop and retention collection', async () => {
    const log = capture();
    let store: Store = memoryStore();
    store = failing(store, 'claimCallbackEvents', 1);
    store = failing(store, 'dueSchedules', 1);
    store = failing(store, 'collect', 1);
    await queueOf(
      { store, logger: log, protocol: { pollMs: 10 }, retention: { collectEveryMs: 20 } },
      { execute: (ctx) => ctx.end(), onFailure: () => undefined },
    );
    await waitFor(() => ['callbacks', 'schedules', 'retention'].every((loop) => logged(log, loop)), 'the log line');
    for (const loop of ['callbacks', 'schedules', 'retention']) {
      const line = log.lines.find((l) => l.message === `${loop} loop failed`);
      expect(line).toMatchObject({ level: 'error', fields: { loop, code: 'STORAGE_FAILURE' } });
    }
  });

  it('logs a commit that failed in the store at error with the run id', async () => {
    const log = capture();
    const inner = memoryStore();
    let failNext = false;
    const store = new Proxy(inner, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== 'transact') return value;
        return (...args: unknown[]) => {
          if (failNext) {
            failNext = false;
            return Promise.reject(new DocketError('STORAGE_FAILURE', 'injected commit failure'));
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const clock = manualClock();
    const { task } = await queueOf(
      { store, logger: log, clock, protocol: { pollMs: 10, leaseMs: 3000, heartbeatMs: 1000 } },
      {
        execute: (ctx) => {
          failNext = true;
          return ctx.end();
        },
      },
    );
    const { runId } = await task.start({ query: null });
    await waitFor(() => log.lines.some((line) => line.fields.loop === 'commits'), 'the log line');
    expect(log.lines.find((line) => line.fields.loop === 'commits')).toMatchObject({
      level: 'error',
      fields: { runId, code: 'STORAGE_FAILURE' },
    });
  });

  it('logs a lease recovery at warn with the run id', async () => {
    const log = capture();
    const store = memoryStore();
    const clock = manualClock();
    const producer = createQueue({ store, clock, runtime: { mode: 'producer' }, logger: false });
    open.push(producer);
    const produced = producer.define({ name: 't', version: '1', events: ['failure'] });
    await producer.ready();
    const { runId } = await produced.start({ query: null });
    const now = clock.now();
    await store.claimDue({
      namespace: 'default',
      tasks: [{ name: 't', version: '1' }],
      limit: 1,
      now,
      plan: (run) => planClaim(run, 'worker:dead', 3000, now),
    });
    clock.advance(3001);
    const { task } = await queueOf(
      { store, clock, logger: log, protocol: { pollMs: 10, leaseMs: 3000, heartbeatMs: 1000 } },
      { execute: (ctx) => ctx.end() },
    );
    await waitForStatus(task, runId, 'success');
    expect(log.lines.find((line) => line.message === 'lease expired: run recovered')).toMatchObject({
      level: 'warn',
      fields: { runId, reason: 'LEASE_EXPIRED' },
    });
  });

  it('logs a failed run and a dead letter at warn, with no payload unless logPayloads', async () => {
    for (const logPayloads of [false, true]) {
      const log = capture();
      const { task, queue } = await queueOf(
        {
          store: memoryStore(),
          logger: log,
          logPayloads,
          protocol: { pollMs: 10 },
          defaults: { callbackPolicy: { attempts: 1 } },
        },
        {
          execute: () => {
            throw new NonRetryableError('refused by the model');
          },
          onFailure: () => {
            throw new Error('webhook down');
          },
        },
      );
      const { runId } = await task.start({ query: { secretish: 'payload-marker' } });
      await waitForStatus(task, runId, 'failed');
      await waitFor(() => log.lines.some((line) => line.message === 'callback dead-lettered'), 'the log line');
      const failed = log.lines.find((line) => line.message === 'run failed');
      expect(failed).toMatchObject({ level: 'warn', fields: { runId, task: 't', reason: 'NON_RETRYABLE' } });
      expect(log.lines.find((line) => line.message === 'callback dead-lettered')).toMatchObject({
        level: 'warn',
        fields: { runId, kind: 'failure', deliveryAttempt: 1 },
      });
      const text = JSON.stringify(log.lines);
      expect(text.includes('payload-marker')).toBe(logPayloads);
      await queue.close();
    }
  });

  it('logs the close report, and a logger that throws changes nothing', async () => {
    const log = capture();
    const { queue } = await queueOf({ store: memoryStore(), logger: log }, { execute: (ctx) => ctx.end() });
    await queue.close();
    expect(log.lines.at(-1)).toMatchObject({ level: 'info', message: 'queue closed', fields: { timedOut: false } });
    const throwing: Logger = {
      debug: () => undefined,
      info: () => {
        throw new Error('logger down');
      },
      warn: () => undefined,
      error: () => undefined,
    };
    const second = await queueOf({ store: memoryStore(), logger: throwing }, { execute: (ctx) => ctx.end() });
    const { runId } = await second.task.start({ query: null });
    await waitForStatus(second.task, runId, 'success');
    await expect(second.queue.close()).resolves.toMatchObject({ status: 'closed' });
  });

  it('writes warnings as JSON lines on stderr by default, and nothing with logger: false', async () => {
    // The suite silences the default logger (vitest.config.ts); this test is of the default as a user gets it.
    vi.stubEnv('DOCKET_LOG_LEVEL', '');
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    for (const logger of [undefined, false] as const) {
      const { task, queue } = await queueOf(
        { store: memoryStore(), protocol: { pollMs: 10 }, ...(logger === undefined ? {} : { logger }) },
        {
          execute: () => {
            throw new NonRetryableError('no');
          },
        },
      );
      const { runId } = await task.start({ query: null });
      await waitForStatus(task, runId, 'failed');
      await queue.close();
    }
    const lines = written.map((line) => JSON.parse(line) as Record<string, unknown>);
    // One `run failed` line from the default logger; `queue closed` is info, below the default level.
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, name: 'docket', msg: 'run failed', reason: 'NON_RETRYABLE' });
  });

  it('refuses a logger without the four methods with CONFIG_INVALID', () => {
    for (const logger of [true, {}, { info: () => undefined }, 'stderr']) {
      expect(() => createQueue({ store: memoryStore(), logger: logger as never })).toThrow(
        expect.objectContaining({ code: 'CONFIG_INVALID' }),
      );
    }
    expect(() => createQueue({ store: memoryStore(), logPayloads: 'yes' as never })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
  });
});

function logged(log: { lines: Line[] }, loop: string): boolean {
  return log.lines.some((line) => line.message === `${loop} loop failed`);
}

describe('the default logger', () => {
  it('DOCKET_LOG_LEVEL sets its level; silent writes nothing; anything else is warn', () => {
    const writes: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string) => {
      writes.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      defaultLogger('silent').error({}, 'not written');
      defaultLogger('error').warn({}, 'below error');
      defaultLogger('error').error({}, 'at error');
      defaultLogger('nonsense').info({}, 'below warn');
      defaultLogger('nonsense').warn({}, 'at warn');
      defaultLogger('debug').debug({}, 'at debug');
    } finally {
      process.stderr.write = write;
    }
    expect(writes.map((line) => JSON.parse(line).msg)).toEqual(['at error', 'at warn', 'at debug']);
  });
});
