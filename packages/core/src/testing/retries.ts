import { expect, it } from 'vitest';
import { DocketError, isDocketError } from '../util/errors.js';
import { NonRetryableError, RetryAfterError } from '../util/retry-errors.js';
import { describeArea, type HarnessFactory, manualClock, sleep, waitFor, waitForStatus } from './harness.js';

/** Retry semantics: final errors, Retry-After, the operator's retry of a failed run, and its callback events. */
export function retriesSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('retries', factory, (area) => {
    it('ends a run failed/NON_RETRYABLE after one execution for NonRetryableError and final provider errors', async () => {
      await area.harness();
      const errors: Record<string, unknown> = {
        own: new NonRetryableError('the input cannot work', { cause: new Error('inner') }),
        unauthorized: new DocketError('PROVIDER_HTTP_ERROR', 'p: HTTP 401', { details: { status: 401 } }),
        wrapped: new Error('while calling the model', {
          cause: new DocketError('PROVIDER_HTTP_ERROR', 'p: HTTP 422', { details: { status: 422 } }),
        }),
        config: new DocketError('PROVIDER_CONFIG_INVALID', 'no key'),
      };
      const executions = new Map<string, number>();
      const { task } = await area.open<string>(
        area.h.store,
        { name: 'final', version: '1', policy: { attempts: 5 } },
        {
          execute(ctx) {
            executions.set(ctx.query, (executions.get(ctx.query) ?? 0) + 1);
            throw errors[ctx.query];
          },
        },
      );
      for (const kind of Object.keys(errors)) {
        const { runId } = await task.start({ query: kind });
        const info = await waitForStatus(task, runId, ['failed', 'cancelled', 'success']);
        expect(info, kind).toMatchObject({ status: 'failed', reason: 'NON_RETRYABLE', businessFailures: 1 });
        expect(executions.get(kind), kind).toBe(1);
        const last = (await task.history(runId)).at(-1);
        expect(last).toMatchObject({ from: 'running', to: 'failed', reason: 'NON_RETRYABLE' });
      }
    });

    it('retries a provider answer that was invalid or truncated, and a 429 or 500, until the attempts are used', async () => {
      await area.harness();
      const { task } = await area.open<string>(
        area.h.store,
        { name: 'ordinary', version: '1', policy: { attempts: 2 } },
        {
          execute(ctx) {
            if (ctx.query === 'invalid') throw new DocketError('PROVIDER_INVALID_RESPONSE', 'not JSON');
            if (ctx.query === 'truncated') throw new DocketError('PROVIDER_TRUNCATED', 'length');
            throw new DocketError('PROVIDER_HTTP_ERROR', 'p: HTTP 500', { details: { status: 500 } });
          },
        },
      );
      for (const kind of ['invalid', 'truncated', 'server']) {
        const { runId } = await task.start({ query: kind });
        const info = await waitForStatus(task, runId, ['failed', 'cancelled', 'success']);
        expect(info, kind).toMatchObject({ status: 'failed', reason: 'ATTEMPTS_EXHAUSTED', businessFailures: 2 });
      }
    });

    it('makes the next attempt due no earlier than retryAfterMs from now, replacing a shorter backoff', async () => {
      await area.harness();
      const clock = manualClock();
      const { task } = await area.open<string>(
        area.h.store,
        { name: 'later', version: '1', policy: { attempts: 3 } },
        {
          execute(ctx) {
            if (ctx.query === 'own') throw new RetryAfterError('busy', { retryAfterMs: 2000 });
            if (ctx.query === 'huge') throw new RetryAfterError('busy', { retryAfterMs: 10 * 3_600_000 });
            throw new DocketError('PROVIDER_HTTP_ERROR', 'p: HTTP 429', {
              details: { status: 429, retryAfterMs: 5000 },
            });
          },
        },
        { clock },
      );
      for (const [kind, wait] of [
        ['own', 2000],
        ['details', 5000],
        ['huge', 3_600_000],
      ] as const) {
        const started = clock.now();
        const { runId } = await task.start({ query: kind });
        const info = await waitForStatus(task, runId, 'retrying');
        expect(info.reason, kind).toBe('ATTEMPT_FAILED');
        // The test's backoff is at most 5 ms: the error's own wait is what decides.
        expect(Date.parse(info.dueAt as string) - started, kind).toBe(wait);
        await sleep(30);
        expect((await task.get(runId))?.status, kind).toBe('retrying');
      }
    });

    it('sends a failed run back to pending with OPERATOR_RETRY, its page and state kept, attempts counted anew', async () => {
      await area.harness();
      let failing = true;
      const seen: { page: number; state: unknown; attempt: number }[] = [];
      const { task, queue } = await area.open<null, { step: number }>(
        area.h.store,
        { name: 'retried', version: '1', policy: { attempts: 2 }, events: ['failure', 'success'] },
        {
          execute(ctx) {
            seen.push({ page: ctx.page, state: ctx.state, attempt: ctx.attempt });
            if (ctx.page === 1) return ctx.next({ step: 1 });
            if (failing) throw new Error('page 2 fails');
            return ctx.end();
          },
          onFailure() {},
          onSuccess() {},
        },
      );
      const { runId } = await task.start({ query: null });
      const failed = await waitForStatus(task, runId, 'failed');
      expect(failed).toMatchObject({ reason: 'ATTEMPTS_EXHAUSTED', page: 2, state: { step: 1 }, businessFailures: 2 });
      const op = queue.operator;
      const stale = await op.runs
        .retry({ runId, expectedRevision: failed.revision - 1, reason: 'stale', commandId: 'retry-stale' })
        .catch((e: unknown) => e);
      expect(isDocketError(stale, 'REVISION_CONFLICT')).toBe(true);
      // The first retry fails again (a second failure event of page 2), the second succeeds.
      const again = await op.runs.retry({
        runId,
        expectedRevision: failed.revision,
        reason: 'try once more',
        commandId: 'retry-1',
      });
      expect(again).toMatchObject({ kind: 'applied', status: 'pending', changed: true });
      const replayed = await op.runs.retry({
        runId,
        expectedRevision: failed.revision,
        reason: 'try once more',
        commandId: 'retry-1',
      });
      expect(replayed).toEqual(again);
      const failedAgain = await waitFor(async () => {
        const info = await task.get(runId);
        return info?.status === 'failed' && info.revision > failed.revision ? info : null;
      }, 'the retried run to fail again');
      failing = false;
      await op.runs.retry({ runId, expectedRevision: failedAgain.revision, reason: 'fixed', commandId: 'retry-2' });
      const done = await waitForStatus(task, runId, 'success');
      expect(done).toMatchObject({ reason: 'COMPLETED', page: 2, attempt: 1, state: { step: 1 } });
      // Page 1 ran once; page 2 twice per life of the run, each life starting at attempt 1, always from step 1.
      expect(seen.map((s) => [s.page, s.attempt])).toEqual([
        [1, 1],
        [2, 1],
        [2, 2],
        [2, 1],
        [2, 2],
        [2, 1],
      ]);
      expect(seen.every((s) => s.page === 1 || (s.state as { step: number }).step === 1)).toBe(true);
      const retries = (await task.history(runId)).filter((e) => e.reason === 'OPERATOR_RETRY');
      expect(retries).toMatchObject([
        { from: 'failed', to: 'pending', actor: 'operator', detail: { reason: 'try once more', commandId: 'retry-1' } },
        { from: 'failed', to: 'pending', actor: 'operator', detail: { reason: 'fixed', commandId: 'retry-2' } },
      ]);
      // Two failures and a success of page 2: three callback events, each delivered, none overwriting another.
      const delivered = await waitFor(async () => {
        const info = await task.get(runId);
        return info?.callbacks.delivered === 3 ? info : null;
      }, 'three delivered callbacks');
      expect(delivered.callbacks).toEqual({ pending: 0, delivered: 3, deadLetters: 0 });
      const noop = await op.runs.retry({ runId, expectedRevision: done.revision, reason: 'x', commandId: 'retry-3' });
      expect(noop).toMatchObject({ kind: 'noop', status: 'success', changed: false });
    });

    it('claims due runs highest priority first, then in due order, and keeps priority out of the idempotency input', async () => {
      await area.harness();
      const producer = await area.open<number>(area.h.store, { name: 'prio', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
      });
      const priorities = [0, 5, -3, 5, 1000, 0, -1000, 1];
      const ids: string[] = [];
      for (const [i, priority] of priorities.entries()) {
        ids.push((await producer.task.start({ query: i, priority })).runId);
      }
      expect((await producer.task.get(ids[4]!))?.priority).toBe(1000);
      const same = await producer.task.start({ query: 99, idempotencyKey: 'k', priority: 3 });
      const again = await producer.task.start({ query: 99, idempotencyKey: 'k', priority: -3 });
      expect(again).toEqual({ runId: same.runId, created: false });
      for (const bad of [1001, -1001, 1.5, '1']) {
        const error = await producer.task.start({ query: 0, priority: bad as number }).catch((e: unknown) => e);
        expect(isDocketError(error, 'CONFIG_INVALID'), String(bad)).toBe(true);
      }
      await producer.task.cancel(same.runId);
      const order: number[] = [];
      const consumer = await area.open<number>(
        area.h.secondStore(),
        { name: 'prio', version: '1' },
        {
          execute(ctx) {
            order.push(ctx.query);
            return ctx.end();
          },
        },
        { runtime: { concurrency: 1 } },
      );
      await waitFor(() => order.length === priorities.length, 'every run executed');
      expect(order).toEqual([4, 1, 3, 7, 0, 5, 2, 6]);
      expect((await consumer.task.get(ids[0]!))?.status).toBe('success');
    });
  });
}
