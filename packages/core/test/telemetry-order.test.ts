import { describe, expect, it } from 'vitest';
import { createQueue, type Store, type TelemetryEvent } from '../src/index.js';
import { type CreateRunRequest, type CreateRunResult, memoryStore } from '../src/store/index.js';
import { waitFor } from '../src/testing/harness.js';

/**
 * A queue of task `name` on a memory store whose start commits at once but answers only after a worker of the queue
 * has claimed and finished the run (what happens when a worker's answers are read before the start's own), and
 * then answers with `answer(result)`. Its telemetry events are collected in `events`.
 */
function lateStartQueue(name: string, answer: (result: CreateRunResult) => CreateRunResult) {
  const inner = memoryStore();
  const late: Store = Object.assign(Object.create(inner) as Store, {
    async createRun(request: CreateRunRequest) {
      const result = await inner.createRun(request);
      await waitFor(
        async () => (await inner.getRun(request.run.namespace, request.run.runId))?.status === 'success',
        'the worker to finish the run',
      );
      return answer(result);
    },
  });
  const events: TelemetryEvent[] = [];
  const queue = createQueue({
    store: late,
    protocol: { pollMs: 5 },
    telemetry: { sink: (event) => events.push(event) },
  });
  const task = queue.define({ name, version: '1' }, { execute: (ctx) => ctx.end() });
  const reasons = () =>
    events.filter((e) => e.type === 'transition').map((e) => (e as { entry: { reason: string } }).entry.reason);
  return { queue, task, events, reasons };
}

describe('telemetry', () => {
  it("reports a run's transitions in order when a worker finishes it before its start has returned", async () => {
    const { queue, task, events, reasons } = lateStartQueue('ordered', (result) => result);
    try {
      await queue.ready();
      await task.start({ query: 1 });
      expect(reasons()).toEqual(['STARTED', 'CLAIMED', 'COMPLETED']);
      expect(events.map((e) => (e as { revision: number }).revision)).toEqual([1, 2, 3]);
    } finally {
      await queue.close();
    }
  });

  it('still reports what a worker did when the start that created the run fails to answer', async () => {
    const { queue, task, reasons } = lateStartQueue('lost', () => {
      throw new Error('connection lost after commit');
    });
    try {
      await queue.ready();
      await expect(task.start({ query: 1 })).rejects.toThrow('connection lost after commit');
      expect(reasons()).toEqual(['CLAIMED', 'COMPLETED']);
    } finally {
      await queue.close();
    }
  });
});
