import { copyFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createQueue, type Logger } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.js';
import { tempDir } from './helpers.js';

describe('a SQLite file deleted or replaced under a running worker', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  /** A worker queue on `filename` that executes `t@1`, its log lines kept. */
  async function worker(filename: string) {
    const lines: string[] = [];
    const keep = (_fields: object, message: string) => lines.push(message);
    const logger: Logger = { debug: keep, info: keep, warn: keep, error: keep };
    const executed: string[] = [];
    const queue = createQueue({
      store: sqliteStore({ filename, fileCheckMs: 20 }),
      protocol: { pollMs: 10 },
      logger,
    });
    cleanups.push(() => queue.close());
    const task = queue.define<string>(
      { name: 't', version: '1' },
      {
        execute(ctx) {
          executed.push(ctx.query);
          return ctx.end();
        },
      },
    );
    await queue.ready();
    return { queue, task, executed, lines };
  }

  for (const how of ['deleted', 'replaced'] as const) {
    it(`is noticed when ${how}: health unavailable, reads and writes refused, nothing claimed, and logged`, async () => {
      const { dir, remove } = tempDir();
      cleanups.push(remove);
      const filename = join(dir, 'docket.sqlite');
      const { queue, task, executed, lines } = await worker(filename);
      await task.start({ query: 'before' });
      await waitFor(() => executed.includes('before'), 'the run started before');
      if (how === 'deleted') {
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${filename}${suffix}`, { force: true });
      } else {
        copyFileSync(filename, join(dir, 'other.sqlite'));
        renameSync(join(dir, 'other.sqlite'), filename);
      }
      const health = await waitFor(async () => {
        const now = await queue.operator.health();
        return now.status === 'unavailable' ? now : null;
      }, 'health to say unavailable');
      expect(health.reasons.join(' ')).toContain(`was ${how === 'deleted' ? 'deleted' : 'replaced by another file'}`);
      await expect(task.start({ query: 'after' })).rejects.toMatchObject({ code: 'CONNECTION_UNAVAILABLE' });
      await expect(task.get('0'.repeat(32))).rejects.toMatchObject({ code: 'CONNECTION_UNAVAILABLE' });
      // A run written into the file now at the path by another process is left for a worker that opens that file.
      const other = createQueue({ store: sqliteStore({ filename }), runtime: { mode: 'producer' }, logger: false });
      cleanups.push(() => other.close());
      const producer = other.define<string>({ name: 't', version: '1' });
      await other.ready();
      const { runId } = await producer.start({ query: 'in the new file' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(executed).toEqual(['before']);
      expect((await producer.get(runId))?.status).toBe('pending');
      expect(lines).toContain('worker loop failed');
    });
  }
});
