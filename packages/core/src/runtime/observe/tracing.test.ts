import { describe, expect, it } from 'vitest';
import { runIn } from '../../../test/run-fixture.js';
import type { Engine } from '../queue/engine.js';
import type { PageOutcome, Tracer } from './telemetry.js';
import { Tracing } from './tracing.js';

/** A tracer that keeps each page span's end, in the order the spans were opened. */
function recordingTracer() {
  const ends: { page: number; outcome: PageOutcome | null | undefined }[] = [];
  const tracer: Tracer = {
    startSpan: () => null,
    pageSpan(info) {
      const entry: (typeof ends)[number] = { page: info.page, outcome: undefined };
      ends.push(entry);
      return {
        end(outcome) {
          entry.outcome = outcome;
        },
      };
    },
  };
  return { tracer, ends };
}

describe('Tracing', () => {
  it("gives each page the outcome of its own writes when the run's next page began before its commit was reported", () => {
    const { tracer, ends } = recordingTracer();
    const engine = { options: { telemetry: { tracer } }, namespace: 'default', log: console } as unknown as Engine;
    const tracing = new Tracing(engine);
    const first = runIn('running', { page: 1, fence: 7 });
    const second = runIn('running', { page: 2, fence: 8 });
    const one = tracing.pageStarted(first);
    // The store wrote page 1's commit with page 2's claim: page 2 begins before page 1's write is reported.
    const two = tracing.pageStarted(second);
    tracing.written({
      run: runIn('pending', { page: 2, fence: 7, reason: 'PAGE_COMMITTED' }),
      history: [],
      events: [],
    });
    tracing.pageEnded(first.runId, one);
    tracing.written({ run: runIn('success', { page: 2, fence: 8, reason: 'COMPLETED' }), history: [], events: [] });
    tracing.pageEnded(second.runId, two);
    expect(ends).toEqual([
      { page: 1, outcome: { status: 'pending', reason: 'PAGE_COMMITTED', error: null } },
      { page: 2, outcome: { status: 'success', reason: 'COMPLETED', error: null } },
    ]);
  });
});
