import { afterEach, describe, expect, it, vi } from 'vitest';
import { createQueue } from '../src/index.js';
import { memoryStore, waitForStatus } from '../src/testing/index.js';

describe('a telemetry sink that fails', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  afterEach(() => {
    process.off('unhandledRejection', onUnhandled);
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it('never crashes the process when it returns a rejected promise, and says so on stderr', async () => {
    process.on('unhandledRejection', onUnhandled);
    // The suite silences the default logger (vitest.config.ts); this test reads it as a user gets it.
    vi.stubEnv('DOCKET_LOG_LEVEL', '');
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const queue = createQueue({
      store: memoryStore(),
      protocol: { pollMs: 10 },
      telemetry: { sink: async () => Promise.reject(new Error('collector down')) },
    });
    const task = queue.define({ name: 'observed', version: '1' }, { execute: (ctx) => ctx.end() });
    await queue.ready();
    const { runId } = await task.start({ query: null });
    await waitForStatus(task, runId, 'success');
    await queue.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
    const lines = written.filter((line) => line.includes('telemetry sink failed')).map((line) => JSON.parse(line));
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines[0]).toMatchObject({ level: 40, runId, err: { message: 'collector down' } });
  });
});
