// The changes-feed trial both SQL stores' tests run: two producer processes and two worker processes write for ten
// seconds while this process reads the feed seven entries at a time; it must see every history entry exactly once,
// each run's entries in `seq` order. `open()` answers a producer queue with the task defined (no handlers);
// `spawn(id, role)` starts a process of tooling/feed/app.mjs on the same store; `reset()` drops what the trial left.
import { expect, it } from 'vitest';
import { spawnFlowWorker } from '../flow/spawn.mjs';

/** How long the producers write. */
const WRITE_MS = 10_000;

/** Reads one page after `next`; answers the items and the next cursor. */
const page = (queue, next) => queue.operator.changes({ limit: 7, ...(next ? { after: next } : {}) });

/** Registers the feed trial. */
export function feedTrialCases({ open, spawn, reset }) {
  it('a reader paging by 7 while two producers and two workers write sees every entry once, in seq order', async () => {
    const procs = [];
    try {
      const { producer, task } = await open();
      for (const [id, role] of [
        ['w0', 'worker'],
        ['w1', 'worker'],
        ['p0', 'producer'],
        ['p1', 'producer'],
      ]) {
        const proc = spawn(id, role, WRITE_MS);
        procs.push(proc);
        await proc.ready;
      }
      const producersDone = Promise.all(procs.slice(2).map(({ proc }) => new Promise((r) => proc.once('exit', r))));
      let done = false;
      void producersDone.then(() => {
        done = true;
      });
      const seen = [];
      let next;
      let quiet = 0;
      // Read while they write; once the producers are gone, until the workers settled everything and the feed is dry.
      for (;;) {
        const { items, next: after } = await page(producer, next);
        seen.push(...items);
        next = after;
        if (items.length > 0) continue;
        if (done) {
          const stats = await producer.operator.stats();
          const unfinished = Object.entries(stats.byStatus).filter(([s, n]) => s !== 'success' && n > 0);
          quiet = unfinished.length === 0 ? quiet + 1 : 0;
          if (quiet >= 3) break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const keys = seen.map((c) => `${c.runId}:${c.seq}`);
      expect(new Set(keys).size).toBe(keys.length);
      const byRun = new Map();
      for (const change of seen) byRun.set(change.runId, [...(byRun.get(change.runId) ?? []), change.seq]);
      const runs = [];
      let cursor;
      do {
        const slice = await producer.operator.runs.list({ limit: 200, ...(cursor ? { cursor } : {}) });
        runs.push(...slice.items);
        cursor = slice.nextCursor ?? undefined;
      } while (cursor);
      expect(runs.length).toBeGreaterThan(100);
      expect(byRun.size).toBe(runs.length);
      for (const run of runs) {
        const history = await producer.operator.runs.history(run.runId);
        expect(byRun.get(run.runId)).toEqual(history.map((entry) => entry.seq));
      }
      expect(runs.every((run) => run.status === 'success')).toBe(true);
      expect(task).toBeDefined();
    } finally {
      for (const { proc } of procs) {
        if (proc.exitCode !== null || proc.signalCode !== null) continue;
        const exited = new Promise((resolve) => proc.once('exit', resolve));
        proc.kill('SIGTERM');
        await exited;
      }
      await reset();
    }
  }, 120_000);
}

/** Spawns one process of the trial (`node <script> ...args`), ready once it printed so. */
export const spawnFeedProcess = spawnFlowWorker;
