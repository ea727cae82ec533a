import { expect, it } from 'vitest';
import { describeArea, type HarnessFactory, openQueue, waitForStatus } from './harness.js';

/** History and reads: one entry per transition, revision equal to the entry count, reads from a second connection. */
export function historySuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('history and reads', factory, (area) => {
    it('writes one ordered entry per transition and the revision equals the entry count', async () => {
      const h = await area.harness();
      const opened = await area.open(
        h.store,
        { name: 'hist', version: '1', policy: { attempts: 2 } },
        {
          execute(ctx) {
            if (ctx.page === 1) return ctx.next({ p: 1 });
            if (ctx.attempt === 1) throw new Error('once');
            return ctx.end();
          },
        },
        { runtime: { workerId: 'w1' } },
      );
      const { runId } = await opened.task.start({ query: { a: 1 } });
      const info = await waitForStatus(opened.task, runId, 'success');
      const history = await opened.task.history(runId);
      expect(history.map((e) => e.seq)).toEqual(history.map((_, i) => i + 1));
      expect(info.revision).toBe(history.length);
      expect(await h.raw.historyCount(runId)).toBe(history.length);
      expect(history[0]).toMatchObject({ from: null, to: 'pending', reason: 'STARTED', actor: 'producer' });
      for (let i = 1; i < history.length; i++) expect(history[i]?.from).toBe(history[i - 1]?.to);
      expect(history.slice(1).every((e) => e.actor === 'worker:w1')).toBe(true);
      for (const entry of history) expect(entry.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(history.find((e) => e.reason === 'ATTEMPT_FAILED')?.detail).toMatchObject({ message: 'once' });
    });

    it('lets a second connection read runs and history while a worker writes', async () => {
      const h = await area.harness();
      const opened = await area.open(
        h.store,
        { name: 'reader', version: '1' },
        { execute: (ctx) => (ctx.page < 3 ? ctx.next({ page: ctx.page }) : ctx.end()) },
      );
      const { queue: reader, task: readTask } = await openQueue(
        h.secondStore(),
        { name: 'reader', version: '1' },
        undefined,
        {
          runtime: { mode: 'producer' },
        },
      );
      area.track(reader);
      const { runId } = await opened.task.start({ query: null });
      const seen = new Set<string>();
      for (;;) {
        const info = await readTask.get(runId);
        if (info) seen.add(info.status);
        if (info?.status === 'success') break;
        await new Promise((r) => setTimeout(r, 1));
      }
      const fromReader = await readTask.history(runId);
      expect(fromReader).toEqual(await opened.task.history(runId));
      expect(fromReader.at(-1)?.reason).toBe('COMPLETED');
      expect(seen.has('success')).toBe(true);
    });

    it('returns null and [] for a run that does not exist', async () => {
      const h = await area.harness();
      const opened = await area.open(h.store, { name: 'missing', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      expect(await opened.task.get('f'.repeat(32))).toBeNull();
      expect(await opened.task.history('f'.repeat(32))).toEqual([]);
    });

    it('writes callback event rows in the settle transaction for each declared kind', async () => {
      const h = await area.harness();
      const opened = await area.open(
        h.store,
        { name: 'events', version: '1', events: ['success', 'batchSettled'] },
        { execute: (ctx) => (ctx.page < 2 ? ctx.next() : ctx.end()) },
      );
      const { runId } = await opened.task.start({ query: null });
      const info = await waitForStatus(opened.task, runId, 'success');
      // Two settled pages and one success, none delivered yet by this queue.
      expect(info.callbacks.pending + info.callbacks.delivered).toBe(3);
      expect(info.callbacks.deadLetters).toBe(0);
    });
  });
}
