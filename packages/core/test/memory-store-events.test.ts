import { describe, expect, it } from 'vitest';
import type { CallbackEventRecord } from '../src/store/index.js';
import { memoryStore } from '../src/store/index.js';
import { runIn } from './run-fixture.js';

/** A pending `success` event of `runId` with the id given, due at 10. */
function eventOf(runId: string, eventId: string, sequence: number): CallbackEventRecord {
  return {
    eventId,
    namespace: 'default',
    runId,
    taskName: 't',
    taskVersion: '1',
    kind: 'success',
    batchId: `${runId}:${sequence}`,
    sequence,
    status: 'pending',
    deliveryAttempt: 0,
    replayGeneration: 0,
    revision: 2,
    dueAt: 10,
    timestamp: new Date(10).toISOString(),
    query: null,
    state: null,
    error: null,
    lastError: null,
    lease: null,
    createdAt: 10,
    updatedAt: 10,
    deliveredAt: null,
    deadAt: null,
  };
}

describe('memory store callback events', () => {
  it('claims events due at the same time in code-unit order of their ids, the order it lists them in reversed', async () => {
    const store = memoryStore();
    const run = runIn('pending', { revision: 1 });
    await store.createRun({
      run,
      history: { seq: 1, at: new Date(0).toISOString(), from: null, to: 'pending', reason: 'STARTED', actor: 'test' },
      maxRuns: null,
    });
    // Code units put ":10:" before ":1:" ('0' < ':'); a locale's collation puts punctuation first, the other way.
    const ids = [`${run.runId}:1:success`, `${run.runId}:10:success`];
    expect(ids[1]?.localeCompare(ids[0] as string)).toBeGreaterThan(0);
    await store.transact('default', run.runId, (_tx, current) => ({
      write: {
        run: { ...(current ?? run), revision: (current ?? run).revision + 1 },
        history: [
          { seq: 2, at: new Date(5).toISOString(), from: 'pending', to: 'pending', reason: 'STARTED', actor: 'test' },
        ],
        // One sequence for both (as events written before sequences rose per event): the id alone orders them.
        events: [eventOf(run.runId, ids[0] as string, 1), eventOf(run.runId, ids[1] as string, 1)],
      },
      value: null,
    }));
    const listed = await store.listCallbackEvents({ namespace: 'default', status: 'pending', limit: 2, before: null });
    const claimed = await store.claimCallbackEvents({
      namespace: 'default',
      tasks: [{ name: 't', version: '1', kinds: ['success'] }],
      limit: 1,
      now: 20,
      plan: (event) => ({
        ...event,
        status: 'delivering',
        deliveryAttempt: 1,
        revision: event.revision + 1,
        lease: { owner: 'w', token: 1, expiresAt: 50 },
      }),
    });
    // Listings are newest first: code-unit order, descending.
    expect(listed.map((e) => e.eventId)).toEqual([ids[0], ids[1]]);
    expect(claimed.map((e) => e.eventId)).toEqual([ids[1]]);
  });
});
