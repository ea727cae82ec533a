import { describe, expect, it } from 'vitest';
import { type CreateRunRequest, createQueue, memoryStore, type Store, type TelemetryEvent } from '../src/index.js';
import { waitFor } from '../src/testing/harness.js';

describe('telemetry', () => {
  it("reports a run's transitions in order when a worker finishes it before its start has returned", async () => {
    const inner = memoryStore();
    // A store whose start commits at once but answers only after the run was claimed and finished: what happens when
    // a worker's answers are read before the start's own.
    const late: Store = Object.assign(Object.create(inner) as Store, {
      async createRun(request: CreateRunRequest) {
        const result = await inner.createRun(request);
        await waitFor(
          async () => (await inner.getRun(request.run.namespace, request.run.runId))?.status === 'success',
          'the worker to finish the run',
        );
        return result;
      },
    });
    const events: TelemetryEvent[] = [];
    const queue = createQueue({
      store: late,
      protocol: { pollMs: 5 },
      telemetry: { sink: (event) => events.push(event) },
    });
    const task = queue.define({ name: 'ordered', version: '1' }, { execute: (ctx) => ctx.end() });
    try {
      await queue.ready();
      const { runId } = await task.start({ query: 1 });
      const transitions = events.filter((e) => e.type === 'transition' && e.runId === runId);
      expect(transitions.map((e) => (e as { entry: { reason: string } }).entry.reason)).toEqual([
        'STARTED',
        'CLAIMED',
        'COMPLETED',
      ]);
      expect(transitions.map((e) => (e as { revision: number }).revision)).toEqual([1, 2, 3]);
    } finally {
      await queue.close();
    }
  });

  it('still reports what a worker did when the start that created the run fails to answer', async () => {
    const inner = memoryStore();
    const lost: Store = Object.assign(Object.create(inner) as Store, {
      async createRun(request: CreateRunRequest) {
        await inner.createRun(request);
        await waitFor(
          async () => (await inner.getRun(request.run.namespace, request.run.runId))?.status === 'success',
          'the worker to finish the run',
        );
        throw new Error('connection lost after commit');
      },
    });
    const events: TelemetryEvent[] = [];
    const queue = createQueue({
      store: lost,
      protocol: { pollMs: 5 },
      telemetry: { sink: (event) => events.push(event) },
    });
    const task = queue.define({ name: 'lost', version: '1' }, { execute: (ctx) => ctx.end() });
    try {
      await queue.ready();
      await expect(task.start({ query: 1 })).rejects.toThrow('connection lost after commit');
      const reasons = events
        .filter((e) => e.type === 'transition')
        .map((e) => (e as { entry: { reason: string } }).entry.reason);
      expect(reasons).toEqual(['CLAIMED', 'COMPLETED']);
    } finally {
      await queue.close();
    }
  });
});
