import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueue } from '@docket/core';
import { waitForStatus } from '@docket/core/testing';
import { sqliteStore } from '@docket/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { httpProvider } from '../src/index.js';
import { type LocalModel, startLocalModel } from '../src/testing/index.js';

describe('retry semantics of provider errors, over real HTTP on a SQLite file', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  /** A queue on a fresh SQLite file whose task asks the local model once per attempt, with three attempts. */
  async function setUp() {
    const dir = mkdtempSync(join(tmpdir(), 'docket-retry-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const local: LocalModel = await startLocalModel();
    cleanups.push(() => local.close());
    const model = httpProvider({ kind: 'openai-compatible', baseUrl: local.baseUrl, model: 'local' });
    const queue = createQueue({
      store: sqliteStore({ filename: join(dir, 'docket.sqlite') }),
      protocol: { pollMs: 10 },
    });
    cleanups.push(() => queue.close());
    const task = queue.define<null>(
      {
        name: 'ask',
        version: '1',
        limits: { modelCalls: 3 },
        policy: { attempts: 3, backoff: { baseMs: 1, maxMs: 5, jitter: 'full' } },
      },
      {
        async execute(ctx) {
          await ctx.callModel(model, { messages: [{ role: 'user', content: 'Say hello' }] });
          return ctx.end();
        },
      },
    );
    await queue.ready();
    return { local, task };
  }

  it('ends the run failed/NON_RETRYABLE after one request when the provider answers 401', async () => {
    const { local, task } = await setUp();
    local.fail('http401');
    const { runId } = await task.start({ query: null });
    const info = await waitForStatus(task, runId, ['failed', 'success', 'cancelled']);
    expect(info).toMatchObject({ status: 'failed', reason: 'NON_RETRYABLE', businessFailures: 1 });
    expect(info.error).toMatchObject({ code: 'PROVIDER_HTTP_ERROR' });
    expect(local.requestCount).toBe(1);
  });

  it("waits out a 429's Retry-After of 2 s before the next attempt, then succeeds", async () => {
    const { local, task } = await setUp();
    local.fail('http429', 1);
    const { runId } = await task.start({ query: null });
    const retrying = await waitForStatus(task, runId, 'retrying');
    expect(retrying.reason).toBe('ATTEMPT_FAILED');
    const info = await waitForStatus(task, runId, 'success', 15_000);
    expect(info.businessFailures).toBe(1);
    const [first, second] = local.requests;
    expect(local.requestCount).toBe(2);
    // The backoff alone would allow the second request within 5 ms; Retry-After holds it back 2 s.
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(2000);
  });
});
