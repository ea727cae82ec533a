import { planClaim, type RunRecord, transition } from '@docket/core';
import { describe, expect, it } from 'vitest';
import { HeldClaims } from '../src/held-claims.js';
import { KnownRuns } from '../src/known-runs.js';

const ACTOR = 'worker:w';

/** A pending run as a claim selects it. */
function pending(runId: string): RunRecord {
  return {
    runId,
    namespace: 'default',
    taskName: 't',
    taskVersion: '1',
    definitionHash: 'h',
    status: 'pending',
    reason: 'STARTED',
    query: null,
    state: null,
    page: 1,
    pageFailures: 0,
    businessFailures: 0,
    scheduledRetries: 0,
    recoveries: 0,
    error: null,
    revision: 1,
    trigger: null,
    dueAt: 0,
    deadlineAt: null,
    modelCallLimit: null,
    modelCallsUsed: 0,
    idempotencyKey: null,
    inputHash: 'x',
    policy: { attempts: 3, timeoutMs: 1000, backoff: { baseMs: 100, maxMs: 1000, jitter: 'full' } },
    events: [],
    recovery: 'automatic',
    triggerEvent: null,
    fence: 0,
    lease: null,
    createdAt: 0,
    updatedAt: 0,
  };
}

/** Holds claims of the given runs in one group, as the store does after its locking select. */
function holdClaims(ids: string[]) {
  const held = new HeldClaims();
  const known = new KnownRuns();
  const writes = ids.map((id) => {
    const current = pending(id);
    const write = planClaim(current, ACTOR, 30_000, 10);
    if (write === null) throw new Error('no claim');
    return { current, write };
  });
  return { held, known, group: held.hold(writes), claimed: writes.map((w) => w.write.run) };
}

/** Core's pure plan for a page that ended, with `value` as its answer. */
const ended =
  (value = 'ended') =>
  (_tx: unknown, current: RunRecord | null) => {
    const decision = transition(current!, { type: 'settle_end', actor: ACTOR, leaseToken: current!.fence }, 20);
    if (!decision.ok) throw new Error(decision.refusal);
    return { write: { run: decision.run, history: [decision.history], events: decision.events }, value };
  };

describe('a held claim group', () => {
  it('folds a pure plan into the claim: one write from the selected row, with both entries, answered at commit', async () => {
    const { held, known, group } = holdClaims(['a', 'b']);
    const answer = held.fuse('default', 'a', ended());
    expect(answer).toBeInstanceOf(Promise);
    let settled = false;
    void answer?.then(() => {
      settled = true;
    });
    const [a, b] = held.close(group);
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
    held.committed(group, known);
    expect(await answer).toBe('ended');
    // The settled run holds no lease, so it is forgotten; the one still running is remembered as claimed.
    expect(known.get('default', 'a')).toBeUndefined();
    expect(known.get('default', 'b')?.status).toBe('running');
    expect(held.ended('a')).toBeUndefined();
    await group.done;
  });

  it('chains plans: a lease renewal and then the settle are both decided on the run as the plan before left it', async () => {
    const { held, known, group } = holdClaims(['a']);
    const renewed = held.fuse('default', 'a', (_tx, current: RunRecord | null) => ({
      write: { run: { ...current!, lease: { ...current!.lease!, expiresAt: 99_999 } }, history: [], events: [] },
      value: 'renewed',
    }));
    const settle = held.fuse('default', 'a', ended());
    const [a] = held.close(group);
    expect(a?.write.run.status).toBe('success');
    expect(a?.write.run.revision).toBe(3);
    held.committed(group, known);
    expect(await renewed).toBe('renewed');
    expect(await settle).toBe('ended');
  });

  it('leaves to the ordinary path every plan it cannot fold, and every call once the group is closed', async () => {
    const { held, known, group } = holdClaims(['a']);
    expect(held.fuse('default', 'missing', ended())).toBeUndefined();
    expect(held.fuse('other', 'a', ended())).toBeUndefined();
    expect(held.fuse('default', 'a', async () => ({ write: null, value: 1 }))).toBeUndefined();
    expect(held.fuse('default', 'a', () => ({ write: null, value: 1 }))).toBeUndefined();
    expect(
      held.fuse('default', 'a', () => {
        throw new Error('plan failed');
      }),
    ).toBeUndefined();
    // A write that skips a revision breaks the write contract: not folded.
    const skipping = (_tx: unknown, current: RunRecord | null) => ({
      write: { run: { ...current!, revision: current!.revision + 2 }, history: [], events: [] },
      value: 1,
    });
    expect(held.fuse('default', 'a', skipping)).toBeUndefined();
    const [a] = held.close(group);
    expect(a?.write.history).toHaveLength(1);
    expect(held.fuse('default', 'a', ended())).toBeUndefined();
    expect(held.ended('a')).toBe(group.done);
    held.committed(group, known);
    await group.done;
  });

  it("rejects the folded plans with the transaction's error when it fails, and forgets the runs", async () => {
    const { held, known, group, claimed } = holdClaims(['a', 'b']);
    for (const run of claimed) known.committed(run);
    const answer = held.fuse('default', 'a', ended());
    held.close(group);
    held.failed(group, known, (runId) => new Error(`lost ${runId}`));
    await expect(answer).rejects.toThrow('lost a');
    await group.done;
    expect(known.get('default', 'a')).toBeUndefined();
    expect(known.get('default', 'b')).toBeUndefined();
    expect(held.ended('b')).toBeUndefined();
  });
});
