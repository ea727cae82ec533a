import { describe, expect, it } from 'vitest';
import { createQueue, type Tracer } from '../src/index.js';
import { memoryStore } from '../src/store/index.js';
import { waitForStatus } from '../src/testing/helpers.js';

/** A tracer that records which hooks were called, and answers `active()` with what `on` holds. */
function countingTracer(on: { active: boolean }) {
  const calls: string[] = [];
  const tracer: Tracer = {
    startSpan() {
      calls.push('start');
      return { traceParent: null, end() {} };
    },
    pageSpan() {
      calls.push('page');
      return { traceParent: null, end: () => void calls.push('page.end') };
    },
    settled: () => void calls.push('settled'),
    active: () => on.active,
  };
  return { tracer, calls };
}

describe('a tracer that answers active()', () => {
  it('is never called while inactive, and traces the next start and page once it is active', async () => {
    const on = { active: false };
    const { tracer, calls } = countingTracer(on);
    const queue = createQueue({ store: memoryStore(), protocol: { pollMs: 5 }, logger: false, telemetry: { tracer } });
    try {
      const task = queue.define({ name: 'quiet', version: '1' }, { execute: (ctx) => ctx.end() });
      await queue.ready();
      const first = await task.start({ query: null });
      await waitForStatus(task, first.runId, 'success');
      expect(calls).toEqual([]);
      on.active = true;
      const second = await task.start({ query: null });
      await waitForStatus(task, second.runId, 'success');
      expect(calls).toEqual(['start', 'page', 'settled', 'page.end']);
    } finally {
      await queue.close();
    }
  });
});
