import { createQueue } from '@docket/core';
import { KnownRuns, planClaim, type RunRecord, transition } from '@docket/core/store';
import { memoryStore } from '@docket/core/testing';
import { describe, expect, it } from 'vitest';
import { HeldClaims } from '../src/sql/claim/held-claims.js';

const ACTOR = 'worker:w';

/** `n` pending runs as a claim selects them: started by core on a memory store and read back. */
async function pendingRuns(n: number): Promise<RunRecord[]> {
  const store = memoryStore();
  const queue = createQueue({ store, runtime: { mode: 'producer' } });
  const task = queue.define({ name: 't', version: '1' });
  await queue.ready();
  const runs: RunRecord[] = [];
  for (let i = 0; i < n; i++) {
    const { runId } = await task.start({ query: { i } });
    runs.push((await store.getRun('default', runId)) as RunRecord);
  }
  await queue.close();
  return runs;
}

/** Holds claims of `n` fresh runs in one batch, as the store does after its locking select. */
async function holdClaims(n: number) {
  const held = new HeldClaims();
  const known = new KnownRuns();
  const writes = (await pendingRuns(n)).map((current) => {
    const write = planClaim(current, ACTOR, 30_000, Date.now());
    if (write === null) throw new Error('no claim');
    return { current, write };
  });
  const ids = writes.map((w) => w.current.runId) as [string, string];
  return { held, known, batch: held.hold(writes), claimed: writes.map((w) => w.write.run), ids };
}

/** Core's pure plan for a page that ended, with `value` as its answer. */
const ended =
  (value = 'ended') =>
  (_tx: unknown, current: RunRecord | null) => {
    const decision = transition(current!, { type: 'page_end', actor: ACTOR, leaseToken: current!.fence }, Date.now());
    if (!decision.ok) throw new Error(decision.refusal);
    return { write: { run: decision.run, history: [decision.history], events: decision.events }, value };
  };

describe('a held claim batch', () => {
  it('folds a pure plan into the claim: one write from the selected row, with both entries, answered at commit', async () => {
    const { held, known, batch, ids } = await holdClaims(2);
    const [a0, b0] = ids;
    const answer = held.fuse('default', a0, ended());
    expect(answer).toBeInstanceOf(Promise);
    let settled = false;
    void answer?.then(() => {
      settled = true;
    });
    const [a, b] = held.close(batch);
    expect(a?.current.status).toBe('pending');
    expect(a?.write.run.status).toBe('success');
    expect(a?.write.history.map((entry) => [entry.seq, entry.reason])).toEqual([
      [2, 'CLAIMED'],
      [3, 'COMPLETED'],
    ]);
    expect(b?.write.run.status).toBe('running');
    expect(b?.write.history.map((entry) => entry.reason)).toEqual(['CLAIMED']);
    await Promise.resolve();
    expect(settled).toBe(false);
    held.committed(batch, known);
    expect(await answer).toBe('ended');
    // The settled run holds no lease, so it is forgotten; the one still running is remembered as claimed.
    expect(known.get('default', a0)).toBeUndefined();
    expect(known.get('default', b0)?.status).toBe('running');
    expect(held.ended(a0)).toBeUndefined();
    await batch.done;
  });

  it('chains plans: a lease renewal and then the settle are both decided on the run as the plan before left it', async () => {
    const { held, known, batch, ids } = await holdClaims(1);
    const renewed = held.fuse('default', ids[0], (_tx, current: RunRecord | null) => ({
      write: { run: { ...current!, lease: { ...current!.lease!, expiresAt: 99_999 } }, history: [], events: [] },
      value: 'renewed',
    }));
    const settle = held.fuse('default', ids[0], ended());
    const [a] = held.close(batch);
    expect(a?.write.run.status).toBe('success');
    expect(a?.write.run.revision).toBe(3);
    held.committed(batch, known);
    expect(await renewed).toBe('renewed');
    expect(await settle).toBe('ended');
  });

  it('leaves to the ordinary path every plan it cannot fold, and every call once the batch is closed', async () => {
    const { held, known, batch, ids } = await holdClaims(1);
    const a = ids[0];
    expect(held.fuse('default', 'missing', ended())).toBeUndefined();
    expect(held.fuse('other', a, ended())).toBeUndefined();
    expect(held.fuse('default', a, async () => ({ write: null, value: 1 }))).toBeUndefined();
    expect(held.fuse('default', a, () => ({ write: null, value: 1 }))).toBeUndefined();
    expect(
      held.fuse('default', a, () => {
        throw new Error('plan failed');
      }),
    ).toBeUndefined();
    // A write that skips a revision breaks the write contract: not folded.
    const skipping = (_tx: unknown, current: RunRecord | null) => ({
      write: { run: { ...current!, revision: current!.revision + 2 }, history: [], events: [] },
      value: 1,
    });
    expect(held.fuse('default', a, skipping)).toBeUndefined();
    const [write] = held.close(batch);
    expect(write?.write.history).toHaveLength(1);
    expect(held.fuse('default', a, ended())).toBeUndefined();
    expect(held.ended(a)).toBe(batch.done);
    held.committed(batch, known);
    await batch.done;
  });

  it("rejects the folded plans with the transaction's error when it fails, and forgets the runs", async () => {
    const { held, known, batch, claimed, ids } = await holdClaims(2);
    const [a, b] = ids;
    for (const run of claimed) known.committed(run);
    const answer = held.fuse('default', a, ended());
    held.close(batch);
    held.failed(batch, known, (runId) => new Error(`lost ${runId}`));
    await expect(answer).rejects.toThrow(`lost ${a}`);
    await batch.done;
    expect(known.get('default', a)).toBeUndefined();
    expect(known.get('default', b)).toBeUndefined();
    expect(held.ended(b)).toBeUndefined();
  });
});
