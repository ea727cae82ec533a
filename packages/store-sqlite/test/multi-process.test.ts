import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue, type Queue } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { type SqliteTransaction, sqliteStore } from '../src/index.js';
import { APP_TABLE_SQL, tempDir } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/process.mjs', import.meta.url));

interface Child {
  proc: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

/** Children that died with an error; checked by `alive()` so a test fails at once instead of timing out. */
const failures: string[] = [];

function alive(): true {
  if (failures.length > 0) throw new Error(failures.splice(0).join('; '));
  return true;
}

function spawnChild(args: string[]): Child {
  const proc = spawn(process.execPath, [FIXTURE, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let buffer = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop() ?? '';
    lines.push(...parts);
  });
  let stderr = '';
  proc.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.on('exit', (code) => {
      if (code !== 0 && code !== null) {
        process.stderr.write(stderr);
        failures.push(`child ${args.join(' ')} exited with ${code}`);
      }
      resolve(code);
    }),
  );
  return { proc, lines, exited };
}

describe('several processes on one SQLite file', () => {
  const children: Child[] = [];
  const queues: Queue<SqliteTransaction>[] = [];
  let tmp: ReturnType<typeof tempDir> | undefined;

  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGKILL');
      await child.exited;
    }
    for (const queue of queues.splice(0)) await queue.close();
    tmp?.remove();
  });

  function setupFile(): string {
    tmp = tempDir();
    const filename = join(tmp.dir, 'shared.sqlite');
    const db = new Database(filename);
    db.exec(APP_TABLE_SQL);
    db.close();
    return filename;
  }

  async function producer(filename: string, recovery: 'automatic' | 'manual' = 'automatic') {
    const queue = createQueue({ store: sqliteStore({ filename }), runtime: { mode: 'producer' } });
    const task = queue.define({
      name: 'mp',
      version: '1',
      recovery,
      policy: { attempts: 5, backoff: { baseMs: 5, maxMs: 50 } },
    });
    await queue.ready();
    queues.push(queue);
    return task;
  }

  it('4 worker processes run 2,000 runs: every run success once, exactly 2,000 effect rows', async () => {
    const filename = setupFile();
    const task = await producer(filename);
    // The workers first, all ready, then the runs: a worker that starts a second sooner than the others (a slow
    // Node start) would otherwise finish all 2,000 runs alone.
    for (let w = 0; w < 4; w++) children.push(spawnChild(['worker', filename, `w${w}`]));
    await waitFor(() => children.every((c) => c.lines.includes('ready')), 'every worker to be ready', 60_000);
    const ids: string[] = [];
    for (let i = 0; i < 2000; i++) ids.push((await task.start({ query: { i } })).runId);
    const raw = new Database(filename, { readonly: true });
    try {
      await waitFor(
        () =>
          alive() &&
          (raw.prepare("SELECT count(*) AS n FROM docket_runs WHERE status = 'success'").get() as { n: number }).n ===
            2000,
        'all 2,000 runs to succeed',
        120_000,
      );
      // Every worker stops through its SIGTERM handler, also one that joined after the others finished the work.
      await waitFor(() => children.every((c) => c.lines.includes('ready')), 'every worker to be ready');
      for (const child of children) child.proc.kill('SIGTERM');
      expect(await Promise.all(children.map((c) => c.exited))).toEqual([0, 0, 0, 0]);
      const rows = raw.prepare('SELECT count(*) AS n, count(DISTINCT key) AS k FROM app_rows').get();
      expect(rows).toEqual({ n: 2000, k: 2000 });
      const statuses = raw.prepare('SELECT status, count(*) AS n FROM docket_runs GROUP BY status').all();
      expect(statuses).toEqual([{ status: 'success', n: 2000 }]);
      // History complete: contiguous seq from 1 to the revision, ending in COMPLETED, for every run.
      const broken = raw
        .prepare(
          `SELECT r.run_id FROM docket_runs r
           WHERE (SELECT count(*) FROM docket_history h WHERE h.run_id = r.run_id) != r.revision
              OR (SELECT max(seq) FROM docket_history h WHERE h.run_id = r.run_id) != r.revision
              OR (SELECT reason FROM docket_history h WHERE h.run_id = r.run_id AND h.seq = r.revision) != 'COMPLETED'`,
        )
        .all();
      expect(broken).toEqual([]);
      const workers = raw
        .prepare("SELECT count(DISTINCT actor) AS n FROM docket_history WHERE reason = 'CLAIMED'")
        .get() as { n: number };
      expect(workers.n).toBeGreaterThan(1);
      expect(ids).toHaveLength(2000);
    } finally {
      raw.close();
    }
  }, 180_000);

  it('recovers a run whose worker was SIGKILLed mid-page; its effect lands exactly once', async () => {
    const filename = setupFile();
    const task = await producer(filename);
    const { runId } = await task.start({ query: { crash: true } });
    const hanging = spawnChild(['hang', filename, 'doomed']);
    children.push(hanging);
    await waitFor(
      () => alive() && hanging.lines.includes(`started ${runId}`),
      'the page to start in the child',
      30_000,
    );
    hanging.proc.kill('SIGKILL');
    await hanging.exited;
    expect((await task.get(runId))?.status).toBe('running');
    const survivor = spawnChild(['worker', filename, 'survivor']);
    children.push(survivor);
    const info = await waitFor(
      async () => {
        alive();
        const current = await task.get(runId);
        return current?.status === 'success' ? current : null;
      },
      'the survivor to recover and finish the run',
      30_000,
    );
    expect(info.recoveries).toBe(1);
    const reasons = (await task.history(runId)).map((e) => e.reason);
    expect(reasons).toEqual(['STARTED', 'CLAIMED', 'LEASE_EXPIRED', 'CLAIMED', 'COMPLETED']);
    const raw = new Database(filename, { readonly: true });
    expect(raw.prepare('SELECT count(*) AS n FROM app_rows WHERE key = ?').get(runId)).toEqual({ n: 1 });
    raw.close();
  }, 60_000);

  it('blocks the run with RECOVERY_REQUIRED after a SIGKILL when recovery is manual', async () => {
    const filename = setupFile();
    const task = await producer(filename, 'manual');
    const { runId } = await task.start({ query: { crash: true } });
    const hanging = spawnChild(['hang', filename, 'doomed', 'manual']);
    children.push(hanging);
    await waitFor(
      () => alive() && hanging.lines.includes(`started ${runId}`),
      'the page to start in the child',
      30_000,
    );
    hanging.proc.kill('SIGKILL');
    await hanging.exited;
    children.push(spawnChild(['worker', filename, 'survivor', 'manual']));
    const info = await waitFor(
      async () => {
        alive();
        const current = await task.get(runId);
        return current?.status === 'blocked' ? current : null;
      },
      'the survivor to block the run',
      30_000,
    );
    expect(info.reason).toBe('RECOVERY_REQUIRED');
    const raw = new Database(filename, { readonly: true });
    expect(raw.prepare('SELECT count(*) AS n FROM app_rows').get()).toEqual({ n: 0 });
    raw.close();
  }, 60_000);

  it('lets another process read get and history while workers write', async () => {
    const filename = setupFile();
    const queue = createQueue({
      store: sqliteStore({ filename }),
      protocol: { pollMs: 10 },
      runtime: { concurrency: 2 },
    });
    const task = queue.define(
      { name: 'mp', version: '1', policy: { attempts: 5, backoff: { baseMs: 5, maxMs: 50 } } },
      {
        async execute(ctx) {
          await new Promise((r) => setTimeout(r, 5));
          if (ctx.page < 3) return ctx.next({ page: ctx.page });
          return ctx.end({ effect: (tx) => tx.run(sql`INSERT INTO app_rows (key) VALUES (${ctx.runId})`) });
        },
      },
    );
    const ids: string[] = [];
    await queue.ready();
    queues.push(queue);
    const producerOnly = await producer(filename);
    for (let i = 0; i < 20; i++) ids.push((await producerOnly.start({ query: { i } })).runId);
    const reader = spawnChild(['reader', filename, ...ids]);
    children.push(reader);
    expect(await reader.exited).toBe(0);
    const report = JSON.parse(reader.lines.at(-1) ?? '{}') as {
      reads: number;
      seen: Record<string, string[]>;
      histories: Record<string, string[]>;
    };
    expect(report.reads).toBeGreaterThanOrEqual(20);
    for (const runId of ids) {
      expect(report.seen[runId]).toContain('success');
      expect(report.histories[runId]).toEqual((await task.history(runId)).map((e) => e.reason));
    }
  }, 60_000);
});
