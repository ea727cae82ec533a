import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createQueue } from '../index.js';
import { memoryStore, waitForStatus } from '../testing/index.js';
import { summarizeError } from './run-error.js';

const encoded = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('summarizeError', () => {
  it('bounds the stored JSON, not only the message, for any message, name and limit', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0001', 'é', '😀', 'a') }),
        fc.string({ maxLength: 300 }),
        fc.integer({ min: 256, max: 4096 }),
        (message, name, limit) => {
          const error = Object.assign(new Error(message), { name: name || 'Error' });
          const summary = summarizeError(error, limit);
          expect(encoded(summary)).toBeLessThanOrEqual(limit);
          if (!summary.truncated) expect(summary.message).toBe(message);
          else expect(message.startsWith(summary.message)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps a run error of 196 KB of quotes within the default 32 KiB as stored', async () => {
    const queue = createQueue({ store: memoryStore(), protocol: { pollMs: 10 }, logger: false });
    const task = queue.define(
      { name: 'loud', version: '1', policy: { attempts: 1 } },
      {
        execute() {
          throw Object.assign(new Error('"'.repeat(196_000)), { name: 'N'.repeat(50_000), code: 'LOUD_FAILURE' });
        },
      },
    );
    await queue.ready();
    const { runId } = await task.start({ query: null });
    const info = await waitForStatus(task, runId, 'failed');
    await queue.close();
    expect(info.error?.code).toBe('LOUD_FAILURE');
    expect(info.error?.truncated).toBe(true);
    expect(encoded(info.error)).toBeLessThanOrEqual(32_768);
    expect(encoded(info.error)).toBeGreaterThan(32_000);
  });
});
