import { describe, expect, it } from 'vitest';
import { Batcher, type Queued } from '../src/wire/micro-batcher.js';

interface Call extends Queued<number> {
  n: number;
}

/** A batcher whose batches wait for the test to finish them, recording what each batch held. */
function recording(maxBatch: number, maxRunning: number) {
  const batches: number[][] = [];
  const finish: (() => void)[] = [];
  const batcher = new Batcher<Call>(
    async (batch) => {
      batches.push(batch.map((c) => c.n));
      await new Promise<void>((resolve) => finish.push(resolve));
      for (const call of batch) call.resolve(call.n);
    },
    { maxBatch, maxRunning },
  );
  const push = (key: string, n: number) =>
    new Promise<number>((resolve, reject) => batcher.push({ key, n, resolve, reject }));
  return { batches, finish, push };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('Batcher', () => {
  it('batches the calls of one turn into one batch of distinct keys, up to maxBatch', async () => {
    const { batches, finish, push } = recording(3, 1);
    const done = [push('a', 1), push('b', 2), push('a', 3), push('c', 4), push('d', 5)];
    await turn();
    expect(batches).toEqual([[1, 2, 4]]);
    finish.shift()?.();
    await turn();
    await turn();
    expect(batches[1]).toEqual([3, 5]);
    finish.shift()?.();
    expect(await Promise.all(done)).toEqual([1, 2, 3, 4, 5]);
  });

  it('never runs two batches holding one key at once, and keeps the calls of a key in order', async () => {
    const { batches, finish, push } = recording(10, 4);
    const first = push('a', 1);
    await turn();
    const second = push('a', 2);
    const other = push('b', 3);
    await turn();
    // 'b' may start while the first batch runs; 'a' must wait for it.
    expect(batches).toEqual([[1], [3]]);
    finish.shift()?.();
    await first;
    await turn();
    await turn();
    expect(batches).toEqual([[1], [3], [2]]);
    for (const f of finish.splice(0)) f();
    expect(await Promise.all([second, other])).toEqual([2, 3]);
  });
});
