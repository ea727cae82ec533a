import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createQueue } from '@docket/core';
import { checkSlotRuns, sleep, waitFor } from '@docket/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/process.mjs', import.meta.url));
const SECONDS = 30;

// Several processes need a real server; .ci/run provides one (DOCKET_TEST_DATABASE_URL).
describe.runIf(DATABASE_URL)('a schedule fired by four processes on one PostgreSQL schema', () => {
  const children: { proc: ChildProcess; lines: string[]; exited: Promise<number | null> }[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
      await child.exited;
    }
  });

  it(`makes exactly one run per one-second slot for ${SECONDS} s: none early, none missing`, async () => {
    const url = DATABASE_URL as string;
    const schema = freshSchema();
    const queue = createQueue({
      store: postgresStore({ connectionString: url, schema }),
      runtime: { mode: 'producer' },
    });
    const task = queue.define({ name: 'tick', version: '1' });
    await queue.ready();
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    try {
      for (let w = 0; w < 4; w++) {
        const proc = spawn(process.execPath, [FIXTURE, 'ticker', url, schema, `t${w}`], {
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
      expect(Date.parse(report.slots[0] as string)).toBeGreaterThan(created);
      expect(Date.parse(report.slots[0] as string)).toBeLessThanOrEqual(created + 1000);
      expect(report.slots.length).toBeGreaterThanOrEqual(SECONDS - 2);
      expect(Date.parse(report.slots.at(-1) as string)).toBeLessThanOrEqual(stopped);
      expect(runs.every((r) => r.status === 'success')).toBe(true);
    } finally {
      await queue.close();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  }, 90_000);
});
