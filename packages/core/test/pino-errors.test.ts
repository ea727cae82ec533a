import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createQueue, DocketError, type Store } from '../src/index.js';
import { memoryStore, waitFor, waitForStatus } from '../src/testing/index.js';

/** A real pino logger writing JSON lines into `lines`. */
function pinoInto(lines: Record<string, unknown>[]) {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  return pino({ level: 'debug' }, sink);
}

describe('errors logged through pino', () => {
  it('a failing loop logs err with its type, message, stack and code, and nothing of its details or cause', async () => {
    const lines: Record<string, unknown>[] = [];
    const store = memoryStore();
    let failures = 0;
    const failing: Store = {
      ...store,
      claimDue: (request) => {
        if (failures++ < 1) {
          throw new DocketError('STORAGE_FAILURE', 'injected claim failure', {
            operation: 'store.claimDue',
            details: { secret: 'payload-value' },
            cause: new Error('inner secret'),
          });
        }
        return store.claimDue(request);
      },
    };
    const queue = createQueue({ store: failing, logger: pinoInto(lines), protocol: { pollMs: 5 } });
    queue.define({ name: 'noop', version: '1' }, { execute: (ctx) => ctx.end() });
    await queue.ready();
    const failed = await waitFor(() => lines.find((line) => line.msg === 'worker loop failed'), 'the loop failure');
    await queue.close();
    const err = failed.err as Record<string, unknown>;
    expect(err).toMatchObject({ type: 'DocketError', message: 'injected claim failure', code: 'STORAGE_FAILURE' });
    expect(String(err.stack)).toMatch(/^DocketError: injected claim failure\n\s+at /);
    expect(JSON.stringify(failed)).not.toMatch(/payload-value|inner secret/);
  });

  it('a failed run logs its error under err with type and message (a stored error has no stack to give)', async () => {
    const lines: Record<string, unknown>[] = [];
    const queue = createQueue({ store: memoryStore(), logger: pinoInto(lines), protocol: { pollMs: 5 } });
    const task = queue.define(
      { name: 'fails', version: '1', policy: { attempts: 1 } },
      {
        execute() {
          throw new TypeError('bad row');
        },
      },
    );
    await queue.ready();
    const { runId } = await task.start({ query: {} });
    await waitForStatus(task, runId, 'failed');
    await queue.close();
    const failed = lines.find((line) => line.msg === 'run failed');
    expect(failed?.err).toMatchObject({ type: 'TypeError', message: 'bad row', stack: 'TypeError: bad row' });
  });
});
