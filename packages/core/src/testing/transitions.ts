import { expect, it } from 'vitest';
import { describeArea, type HarnessFactory, openQueue, sleep, waitFor, waitForStatus } from './harness.js';

/** Every transition a worker drives: pages, retries, timeouts, contract violations, cancels. */
export function transitionsSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('transitions', factory, (area) => {
    it('commits pages in order, keeps the state, and ends in success', async () => {
      const h = await area.harness();
      const seen: { page: number; state: unknown; batchId: string }[] = [];
      const opened = await openQueue<Tx, { pages: number }, { done: number }>(
        h.store,
        { name: 'pages', version: '1' },
        {
          execute(ctx) {
            seen.push({ page: ctx.page, state: ctx.state, batchId: ctx.batchId });
            const done = ctx.state?.done ?? 0;
            return done + 1 >= ctx.query.pages ? ctx.end() : ctx.next({ done: done + 1 });
          },
        },
      );
      area.track(opened.queue);
      const { runId } = await opened.task.start({ query: { pages: 3 } });
      const info = await waitForStatus(opened.task, runId, 'success');
      expect(seen).toEqual([
        { page: 1, state: null, batchId: `${runId}:1` },
        { page: 2, state: { done: 1 }, batchId: `${runId}:2` },
        { page: 3, state: { done: 2 }, batchId: `${runId}:3` },
      ]);
      expect(info).toMatchObject({ page: 3, state: { done: 2 }, reason: 'COMPLETED', attempt: 1, error: null });
      const reasons = (await opened.task.history(runId)).map((e) => e.reason);
      expect(reasons).toEqual([
        'STARTED',
        'CLAIMED',
        'PAGE_COMMITTED',
        'CLAIMED',
        'PAGE_COMMITTED',
        'CLAIMED',
        'COMPLETED',
      ]);
    });

    it('retries a throwing page with the same batchId, then succeeds', async () => {
      const h = await area.harness();
      const batchIds: string[] = [];
      const opened = await area.open(
        h.store,
        { name: 'retry', version: '1', policy: { attempts: 3 } },
        {
          execute(ctx) {
            batchIds.push(`${ctx.batchId}#${ctx.attempt}`);
            if (ctx.attempt < 3) throw new Error(`boom ${ctx.attempt}`);
            return ctx.end();
          },
        },
      );
      const { runId } = await opened.task.start({ query: null });
      const info = await waitForStatus(opened.task, runId, 'success');
      expect(batchIds).toEqual([`${runId}:1#1`, `${runId}:1#2`, `${runId}:1#3`]);
      expect(info).toMatchObject({ businessFailures: 2, scheduledRetries: 2, attempt: 3 });
      const reasons = (await opened.task.history(runId)).map((e) => e.reason);
      expect(reasons.filter((r) => r === 'ATTEMPT_FAILED')).toHaveLength(2);
    });

    it('fails after the last attempt with ATTEMPTS_EXHAUSTED and keeps the error', async () => {
      const h = await area.harness();
      const opened = await area.open(
        h.store,
        { name: 'exhaust', version: '1', policy: { attempts: 2 } },
        {
          execute() {
            throw Object.assign(new Error('no stock'), { code: 'OUT_OF_STOCK' });
          },
        },
      );
      const { runId } = await opened.task.start({ query: null });
      const info = await waitForStatus(opened.task, runId, 'failed');
      expect(info.reason).toBe('ATTEMPTS_EXHAUSTED');
      expect(info.error).toEqual({ code: 'OUT_OF_STOCK', name: 'Error', message: 'no stock', truncated: false });
    });

    it('marks an error without a code BUSINESS_ERROR and truncates it to errorBytes as stored', async () => {
      const h = await area.harness();
      const opened = await area.open(
        h.store,
        { name: 'longerr', version: '1', policy: { attempts: 1 } },
        {
          execute() {
            throw new Error('x'.repeat(1000));
          },
        },
        { limits: { errorBytes: 300 } },
      );
      const { runId } = await opened.task.start({ query: null });
      const info = await waitForStatus(opened.task, runId, 'failed');
      expect(info.error).toMatchObject({ code: 'BUSINESS_ERROR', truncated: true });
      const stored = Buffer.byteLength(JSON.stringify(info.error), 'utf8');
      expect(stored).toBeLessThanOrEqual(300);
      expect(stored).toBeGreaterThan(290);
      expect(info.error?.message).toBe('x'.repeat(info.error?.message.length ?? 0));
    });

    it('times an attempt out through ctx.signal and retries it (ATTEMPT_TIMEOUT)', async () => {
      const h = await area.harness();
      let aborted = 0;
      const opened = await area.open(
        h.store,
        { name: 'timeout', version: '1', policy: { attempts: 2, timeoutMs: 30 } },
        {
          async execute(ctx) {
            if (ctx.attempt === 1) {
              await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
              aborted++;
              return ctx.end();
            }
            return ctx.end();
          },
        },
      );
      const { runId } = await opened.task.start({ query: null });
      await waitForStatus(opened.task, runId, 'success');
      expect(aborted).toBe(1);
      const history = await opened.task.history(runId);
      expect(history.map((e) => e.reason)).toContain('ATTEMPT_TIMEOUT');
      expect(history.filter((e) => e.reason === 'COMPLETED')).toHaveLength(1);
    });

    it('fails at once with HANDLER_CONTRACT_INVALID when execute returns no control object', async () => {
      const h = await area.harness();
      const opened = await area.open(
        h.store,
        { name: 'contract', version: '1', policy: { attempts: 5 } },
        { execute: () => undefined as never },
      );
      const { runId } = await opened.task.start({ query: null });
      const info = await waitForStatus(opened.task, runId, 'failed');
      expect(info).toMatchObject({ reason: 'HANDLER_CONTRACT_INVALID', attempt: 1 });
      expect(info.error?.code).toBe('HANDLER_CONTRACT_INVALID');
    });

    it('fails at once when a control is called twice, and writes no effect', async () => {
      const h = await area.harness();
      const opened = await area.open(
        h.store,
        { name: 'twice', version: '1', policy: { attempts: 5 } },
        {
          execute(ctx) {
            const first = ctx.next({ a: 1 }, { effect: (tx) => h.writeAppRow(tx, ctx.runId) });
            try {
              ctx.end();
            } catch {
              // The second call throws; returning the first control does not make the page valid.
            }
            return first;
          },
        },
      );
      const { runId } = await opened.task.start({ query: null });
      const info = await waitForStatus(opened.task, runId, 'failed');
      expect(info.reason).toBe('HANDLER_CONTRACT_INVALID');
      expect(await h.countAppRows(runId)).toBe(0);
    });

    it('cancels a pending run, and a cancel of a terminal run changes nothing', async () => {
      const h = await area.harness();
      const opened = await area.open(h.store, { name: 'cancel', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      const { runId } = await opened.task.start({ query: null });
      const first = await opened.task.cancel(runId);
      expect(first).toEqual({ found: true, runId, status: 'cancelled', revision: 2, changed: true });
      const second = await opened.task.cancel(runId);
      expect(second).toEqual({ found: true, runId, status: 'cancelled', revision: 2, changed: false });
      expect(await opened.task.cancel('0'.repeat(32))).toEqual({ found: false, runId: '0'.repeat(32) });
      expect((await opened.task.get(runId))?.reason).toBe('CANCELLED');
      expect(await h.raw.historyCount(runId)).toBe(2);
    });

    it('aborts a running page on cancel and refuses its commit: no effect lands', async () => {
      const h = await area.harness();
      let started = false;
      let sawAbort = false;
      const opened = await area.open(
        h.store,
        { name: 'cancel-running', version: '1' },
        {
          async execute(ctx) {
            started = true;
            await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
            sawAbort = true;
            return ctx.end({ effect: (tx) => h.writeAppRow(tx, ctx.runId) });
          },
        },
      );
      const { runId } = await opened.task.start({ query: null });
      await waitFor(() => started, 'page to start');
      const result = await opened.task.cancel(runId);
      expect(result).toMatchObject({ status: 'cancelled', changed: true });
      await waitFor(() => sawAbort, 'signal to abort');
      await sleep(30);
      expect(await h.countAppRows(runId)).toBe(0);
      const info = await opened.task.get(runId);
      expect(info).toMatchObject({ status: 'cancelled', reason: 'CANCELLED' });
      expect((await opened.task.history(runId)).at(-1)?.reason).toBe('CANCELLED');
    });

    it('keeps a terminal run terminal: a later cancel does not change it', async () => {
      const h = await area.harness();
      const opened = await area.open(h.store, { name: 'final', version: '1' }, { execute: (ctx) => ctx.end() });
      const { runId } = await opened.task.start({ query: null });
      const done = await waitForStatus(opened.task, runId, 'success');
      expect(await opened.task.cancel(runId)).toMatchObject({ status: 'success', changed: false });
      expect(await opened.task.get(runId)).toMatchObject({ status: 'success', revision: done.revision });
    });

    it('cancels a run whose deadline passed before its claim, without executing it', async () => {
      const h = await area.harness();
      let executed = 0;
      const opened = await area.open(
        h.store,
        { name: 'deadline-claim', version: '1' },
        {
          execute(ctx) {
            executed++;
            return ctx.end();
          },
        },
      );
      const { runId } = await opened.task.start({ query: null, limits: { deadlineAt: new Date(Date.now() - 1000) } });
      const info = await waitForStatus(opened.task, runId, 'cancelled');
      expect(info.reason).toBe('DEADLINE');
      expect(executed).toBe(0);
    });
  });
}
