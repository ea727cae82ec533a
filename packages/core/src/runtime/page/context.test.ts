import { describe, expect, it } from 'vitest';
import type { PageControl } from '../task/handlers.js';
import { PageContext } from './context.js';
import { PageFlight } from './flight.js';

const control = { kind: 'end' } as unknown as PageControl;

function contextOf(flight: PageFlight, calls: string[] = []) {
  return new PageContext(
    'run-1',
    { q: 1 },
    null,
    2,
    1,
    () => {
      calls.push('next');
      return control;
    },
    () => {
      calls.push('end');
      return control;
    },
    async () => {
      calls.push('callModel');
      return { text: '', finishReason: 'stop' } as never;
    },
    flight,
    [],
  );
}

describe('PageContext', () => {
  it('answers its fields and batchId as runId:page', () => {
    const ctx = contextOf(new PageFlight('run-1', 1));
    expect(ctx).toMatchObject({ runId: 'run-1', query: { q: 1 }, state: null, page: 2, attempt: 1, children: [] });
    expect(ctx.batchId).toBe('run-1:2');
  });

  it('keeps its controls callable when a handler destructures them', async () => {
    const calls: string[] = [];
    const { next, end, callModel } = contextOf(new PageFlight('run-1', 1), calls);
    expect(next()).toBe(control);
    expect(end()).toBe(control);
    await callModel({} as never, {} as never);
    expect(calls).toEqual(['next', 'end', 'callModel']);
  });

  it("reads signal from the page's flight: the same signal each time, aborted when the page stops", () => {
    const flight = new PageFlight('run-1', 1);
    const ctx = contextOf(flight);
    const { signal } = ctx;
    expect(ctx.signal).toBe(signal);
    expect(signal.aborted).toBe(false);
    flight.abort(new Error('stopped'));
    expect(ctx.signal.aborted).toBe(true);
  });

  it('shows no page internals among its own keys', () => {
    const ctx = contextOf(new PageFlight('run-1', 1));
    expect(Object.keys(ctx).sort()).toEqual([
      'attempt',
      'callModel',
      'children',
      'end',
      'next',
      'page',
      'query',
      'runId',
      'state',
    ]);
  });
});
