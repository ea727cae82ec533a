import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue, type Queue } from '@docket/core';
import { sqliteStore } from '@docket/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'docket-cli-watch-'));
const db = join(dir, 'docket.sqlite');

/** A `docket watch` process and the lines it printed so far. */
function watch(args: string[]): { child: ChildProcessWithoutNullStreams; lines: string[]; err: () => string } {
  const child = spawn(process.execPath, [BIN, '--db', db, 'watch', ...args], { env: { PATH: process.env.PATH ?? '' } });
  const lines: string[] = [];
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => {
    out += c;
    const parts = out.split('\n');
    out = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr.on('data', (c) => {
    err += c;
  });
  return { child, lines, err: () => err };
}

async function until(predicate: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Stops the watch with SIGINT and answers its exit code. */
function interrupt(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  child.kill('SIGINT');
  return closed;
}

let queue: Queue;
let task: ReturnType<Queue['define']>;
let other: ReturnType<Queue['define']>;
let oldRunId = '';

beforeAll(async () => {
  queue = createQueue({ store: sqliteStore({ filename: db }), logger: false, protocol: { pollMs: 20 } });
  task = queue.define({ name: 'watched', version: '1' }, { execute: (ctx) => ctx.end() });
  other = queue.define({ name: 'other', version: '1' }, { execute: (ctx) => ctx.end() });
  await queue.ready();
  oldRunId = (await task.start({ query: 'before' })).runId;
});
afterAll(async () => {
  await queue.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('docket watch', () => {
  it('prints what other processes commit from now on, one JSON object per line, until SIGINT (exit 0)', async () => {
    const w = watch(['--json', '--task', 'watched']);
    await until(() => w.err().includes('watching default (task watched); Ctrl-C stops'), 'the watch to start');
    const { runId } = await task.start({ query: 'after' });
    await other.start({ query: 'not this task' });
    await until(() => w.lines.some((line) => line.includes('"to":"success"')), 'the run to succeed in the feed');
    const changes = w.lines.map((line) => JSON.parse(line) as { runId: string; seq: number; cursor: string });
    expect(changes.every((c) => c.runId === runId)).toBe(true);
    expect(changes.map((c) => c.seq)).toEqual((await task.history(runId)).map((entry) => entry.seq));
    expect(changes.every((c) => typeof c.cursor === 'string')).toBe(true);
    expect(await interrupt(w.child)).toBe(0);
  });

  it('prints lines from the oldest entry with --from-start, and refuses --cursor with it (exit 2)', async () => {
    const w = watch(['--from-start']);
    await until(() => w.lines.some((line) => line.includes(oldRunId)), 'the oldest run');
    expect(w.lines[0]).toMatch(new RegExp(`^\\S+  ${oldRunId}  watched@1  \\(new\\) -> pending  STARTED  `));
    expect(await interrupt(w.child)).toBe(0);
    const both = watch(['--from-start', '--cursor', 'x']);
    const code = await new Promise<number | null>((resolve) => both.child.on('close', resolve));
    expect(code).toBe(2);
    expect(both.err()).toContain('watch takes --cursor or --from-start, not both');
  });

  it('says CURSOR_INVALID for a cursor of another feed (exit 1)', async () => {
    const w = watch(['--cursor', 'bm90LWEtY3Vyc29y']);
    const code = await new Promise<number | null>((resolve) => w.child.on('close', resolve));
    expect(code).toBe(1);
    expect(w.err()).toContain('CURSOR_INVALID');
  });
});
