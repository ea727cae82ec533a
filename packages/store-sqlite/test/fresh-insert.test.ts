import { newRun, type RunRecord } from '@docket/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import { fileStore } from './helpers.js';

/** A fresh start with every optional column set, in `namespace`. */
const fresh = (runId: string): RunRecord =>
  newRun({
    runId,
    namespace: 'default',
    taskName: 'notice',
    taskVersion: '2',
    definitionHash: 'h'.repeat(64),
    query: { release: 7 },
    inputHash: 'i'.repeat(64),
    idempotencyKey: `key-${runId}`,
    trigger: { at: new Date(Date.now() + 3_600_000).toISOString() },
    dueAt: Date.now() + 3_600_000,
    deadlineAt: Date.now() + 7_200_000,
    modelCallLimit: 3,
    policy: { attempts: 2, timeoutMs: 500, backoff: { baseMs: 1, maxMs: 2, jitter: 'full' } },
    events: ['success'],
    recovery: 'manual',
    createdAt: Date.now(),
    priority: 5,
    traceParent: '00-0123456789abcdef0123456789abcdef-0123456789abcdef-01',
    group: 'acme',
  });

const started = { seq: 1, at: new Date().toISOString(), from: null, to: 'waiting', reason: 'STARTED', actor: 'test' };

describe('inserting a run (a real SQLite file)', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function open() {
    const { store } = fileStore(cleanups);
    await store.open();
    cleanups.push(() => store.close());
    return store;
  }

  it('reads back a fresh start (bound by its 23 varying columns) and a written run (all 42) as they were', async () => {
    const store = await open();
    const run = fresh('a'.repeat(32));
    expect(await store.createRun({ run, history: started as never, maxRuns: null })).toEqual({ kind: 'created', run });
    expect(await store.getRun('default', run.runId)).toEqual(run);
    // A run some write changed is not fresh: every column is bound.
    const moved: RunRecord = {
      ...fresh('b'.repeat(32)),
      revision: 3,
      page: 2,
      state: { cursor: 'c' },
      retries: 1,
      fence: 2,
    };
    await store.createRun({ run: moved, history: started as never, maxRuns: null });
    expect(await store.getRun('default', moved.runId)).toEqual(moved);
  });
});
