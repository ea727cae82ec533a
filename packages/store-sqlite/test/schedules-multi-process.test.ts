import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue } from '@docket/core';
import { checkSlotRuns, sleep, waitFor } from '@docket/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { sqliteStore } from '../src/index.js';
import { tempDir } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/process.mjs', import.meta.url));
const SECONDS = 30;

describe('a schedule fired by four processes on one SQLite file', () => {
  const children: { proc: ChildProcess; lines: string[]; exited: Promise<number | null> }[] = [];
  let tmp: ReturnType<typeof tempDir> | undefined;
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
      await child.exited;
    }
    tmp?.remove();
  });

  it(`makes exactly one run per one-second slot for ${SECONDS} s: none early, none missing`, async () => {
    tmp = tempDir();
    const filename = join(tmp.dir, 'ticks.sqlite');
    const queue = createQueue({ store: sqliteStore({ filename }), runtime: { mode: 'producer' } });
    const task = queue.define({ name: 'tick', version: '1' });
    await queue.ready();
    try {
      for (let w = 0; w < 4; w++) {
        const proc = spawn(process.execPath, [FIXTURE, 'ticker', filename, `t${w}`], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const lines: string[] = [];
        proc.stdout?.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
        children.push({ proc, lines, exited: new Promise((resolve) => proc.on('exit', resolve)) });
      }
      await waitFor(() => children.every((c) => c.lines.includes('ready')), 'every ticker to be ready', 30_000);
      const created = Date.now();
      await task.schedule('every-second', { cron: '* * * * * *', query: null });
      await sleep(SECONDS * 1000);
      await task.unschedule('every-second');
      const stopped = Date.now();
      for (const child of children) child.proc.kill('SIGTERM');
      expect(await Promise.all(children.map((c) => c.exited))).toEqual([0, 0, 0, 0]);
      const runs = [];
      let cursor: string | undefined;
      do {
        const page = await queue.operator.runs.list({ taskName: 'tick', limit: 200, ...(cursor ? { cursor } : {}) });
        runs.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      const report = checkSlotRuns(runs, 'every-second', 1000);
      expect(report.duplicates).toEqual([]);
      expect(report.missing).toEqual([]);
      expect(report.early).toEqual([]);
      // The first slot is the first second after the schedule was made; the last is within a poll of its removal.
      expect(Date.parse(report.slots[0] as string)).toBeGreaterThan(created);
      expect(Date.parse(report.slots[0] as string)).toBeLessThanOrEqual(created + 1000);
      expect(report.slots.length).toBeGreaterThanOrEqual(SECONDS - 2);
      expect(Date.parse(report.slots.at(-1) as string)).toBeLessThanOrEqual(stopped);
      expect(runs.every((r) => r.status === 'success')).toBe(true);
    } finally {
      await queue.close();
    }
  }, 90_000);
});
