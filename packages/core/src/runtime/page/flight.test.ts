import { describe, expect, it } from 'vitest';
import { PageFlight } from './flight.js';

const handler = (execute: (ctx: string) => unknown) => ({ execute });

describe('PageFlight', () => {
  it('finishes with what the handler returns synchronously, and calls it with the context', async () => {
    const flight = new PageFlight('run-1', 1);
    let seen: string | null = null;
    flight.run(
      handler((ctx) => {
        seen = ctx;
        return 'control';
      }),
      'ctx',
    );
    expect(seen).toBe('ctx');
    // Ended at once, and readable without waiting: the page starts no timers and skips an await for it.
    expect(flight.result).toEqual({ kind: 'returned', value: 'control' });
    await expect(flight.outcome).resolves.toEqual({ kind: 'returned', value: 'control' });
  });

  it('has not ended while the handler runs, and keeps the first outcome when a stop comes after it', async () => {
    let finish: (value: string) => void = () => {};
    const flight = new PageFlight('run-1', 1);
    flight.run(
      handler(() => new Promise<string>((resolve) => (finish = resolve))),
      '',
    );
    expect(flight.result).toBeNull();
    finish('control');
    await expect(flight.outcome).resolves.toEqual({ kind: 'returned', value: 'control' });
    flight.abort(new Error('too late'));
    expect(flight.result).toEqual({ kind: 'returned', value: 'control' });
  });

  it('finishes with what the handler throws, synchronously or from its promise', async () => {
    const thrown = new PageFlight('run-1', 1);
    thrown.run(
      handler(() => {
        throw new Error('boom');
      }),
      '',
    );
    await expect(thrown.outcome).resolves.toMatchObject({ kind: 'threw', error: { message: 'boom' } });

    const rejected = new PageFlight('run-2', 1);
    rejected.run(
      handler(() => Promise.reject(new Error('later'))),
      '',
    );
    await expect(rejected.outcome).resolves.toMatchObject({ kind: 'threw', error: { message: 'later' } });
  });

  it("finishes as thrown when reading the returned value's then throws", async () => {
    const flight = new PageFlight('run-1', 1);
    const hostile = Object.defineProperty({}, 'then', {
      get() {
        throw new Error('no then for you');
      },
    });
    flight.run(
      handler(() => hostile),
      '',
    );
    await expect(flight.outcome).resolves.toMatchObject({ kind: 'threw', error: { message: 'no then for you' } });
  });

  it('waits for a handler that returns a promise', async () => {
    const flight = new PageFlight('run-1', 1);
    flight.run(
      handler(() => new Promise((resolve) => setTimeout(() => resolve('late'), 5))),
      '',
    );
    await expect(flight.outcome).resolves.toEqual({ kind: 'returned', value: 'late' });
  });

  it('lets a stop win over a handler still running, and ignores the handler ending afterwards', async () => {
    const flight = new PageFlight('run-1', 1);
    let finish!: (value: string) => void;
    flight.run(
      handler(() => new Promise((resolve) => (finish = resolve))),
      '',
    );
    flight.stopReason = 'timeout';
    flight.abort(new Error('timed out'));
    finish('too late');
    await expect(flight.outcome).resolves.toEqual({ kind: 'stopped', reason: 'timeout' });
    expect(flight.signal().aborted).toBe(true);
  });

  it('lets a stop that came before the handler win, though the handler still runs', async () => {
    const flight = new PageFlight('run-1', 1);
    flight.abort(new Error('caller gave up'));
    let ran = false;
    flight.run(
      handler(() => {
        ran = true;
        return 'control';
      }),
      '',
    );
    expect(ran).toBe(true);
    await expect(flight.outcome).resolves.toEqual({ kind: 'stopped', reason: 'cancelled' });
  });

  it('makes its signal on first use, aborted with the first stop reason only', () => {
    const flight = new PageFlight('run-1', 7);
    const signal = flight.signal();
    expect(signal.aborted).toBe(false);
    expect(flight.signal()).toBe(signal);
    const first = new Error('first');
    flight.abort(first);
    flight.abort(new Error('second'));
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(first);
    expect([flight.runId, flight.token]).toEqual(['run-1', 7]);
  });
});
