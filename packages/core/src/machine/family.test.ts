import { describe, expect, it } from 'vitest';
import { runIn } from '../../test/run-fixture.js';
import { countChildren, type FamilyIo, followFamilySync, planParentMove, touchesFamily } from './family.js';
import type { RunRecord } from './run-types.js';
import type { RunWrite } from './run-write.js';
import { transition } from './state-machine.js';

const PARENT = 'p'.repeat(32);
const counts = (total: number, settled: number, childFailure: 'continue' | 'fail' = 'continue') => ({
  total,
  settled,
  page: 1,
  childFailure,
});

function waitingParent(total: number, settled = 0, childFailure: 'continue' | 'fail' = 'continue'): RunRecord {
  return runIn('waiting', {
    runId: PARENT,
    trigger: null,
    dueAt: null,
    page: 2,
    children: counts(total, settled, childFailure),
  });
}

function child(index: number, status: RunRecord['status'] = 'running', patch: Partial<RunRecord> = {}): RunRecord {
  return runIn(status, { runId: `${index}`.padStart(32, 'c'), parent: { runId: PARENT, page: 1 }, ...patch });
}

/** The write that ends a running child as `status`. */
function ending(run: RunRecord, status: 'success' | 'failed' | 'cancelled', now = 100): RunWrite {
  const input =
    status === 'success'
      ? ({ type: 'page_end', actor: 'w', leaseToken: 7 } as const)
      : status === 'failed'
        ? ({
            type: 'attempt_failed',
            actor: 'w',
            leaseToken: 7,
            error: { code: 'E', name: 'E', message: 'm', truncated: false },
            timedOut: false,
            random: 0,
            final: true,
          } as const)
        : ({ type: 'cancel', actor: 'w', reason: 'CANCELLED' } as const);
  const decision = transition(run, input, now);
  if (!decision.ok) throw new Error(decision.message);
  return { run: decision.run, history: [decision.history], events: decision.events };
}

/** A store of a few runs in a map, answering the family walk's steps, and every write it made. */
function mapStore(runs: RunRecord[]) {
  const rows = new Map(runs.map((run) => [run.runId, run]));
  const writes: RunWrite[] = [];
  const counts: number[] = [];
  const io: FamilyIo = {
    count: (_ns, id, by, now) => {
      counts.push(by);
      const parent = rows.get(id);
      const counted = parent === undefined ? null : countChildren(parent, by, now);
      if (counted === null) return null;
      rows.set(id, counted);
      return { status: counted.status, children: counted.children as NonNullable<RunRecord['children']> };
    },
    read: (_ns, id) => rows.get(id) ?? null,
    unsettled: (_ns, parentRunId) =>
      [...rows.values()].filter(
        (r) => r.parent?.runId === parentRunId && !['success', 'failed', 'cancelled'].includes(r.status),
      ),
    write: (_current, write) => {
      writes.push(write);
      rows.set(write.run.runId, write.run);
    },
    insert: (children) => {
      for (const c of children) rows.set(c.run.runId, c.run);
    },
  };
  return { rows, writes, counts, io };
}

describe('touchesFamily', () => {
  it('is true for a settling child, an ending parent with unsettled children, and a write with children only', () => {
    const running = child(1);
    expect(touchesFamily(running, ending(running, 'success'))).toBe(true);
    const plain = runIn('running');
    expect(touchesFamily(plain, ending(plain, 'success'))).toBe(false);
    const parent = waitingParent(3, 1);
    const cancel = transition(parent, { type: 'cancel', actor: 'o', reason: 'OPERATOR_STOP' }, 5);
    if (!cancel.ok) throw new Error('refused');
    expect(touchesFamily(parent, { run: cancel.run, history: [cancel.history], events: [] })).toBe(true);
    expect(touchesFamily(waitingParent(3, 3), { run: waitingParent(3, 3), history: [], events: [] })).toBe(false);
  });
});

describe('the family walk', () => {
  it('counts a settled child on its parent with no history entry, and wakes the parent at its last child', () => {
    const parent = waitingParent(2, 0);
    const first = child(1);
    const second = child(2);
    const store = mapStore([parent, first, second]);
    followFamilySync([{ current: first, write: ending(first, 'success') }], store.io);
    expect(store.rows.get(PARENT)).toMatchObject({
      status: 'waiting',
      revision: parent.revision,
      children: counts(2, 1),
    });
    followFamilySync([{ current: second, write: ending(second, 'failed') }], store.io);
    expect(store.rows.get(PARENT)).toMatchObject({
      status: 'pending',
      reason: 'CHILDREN_SETTLED',
      revision: parent.revision + 1,
      children: counts(2, 2),
    });
  });

  it('counts a child retried by an operator once: its second settle leaves the counter alone', () => {
    const parent = waitingParent(2, 1);
    const retried = child(1, 'running', { retries: 1 });
    const store = mapStore([parent, retried]);
    followFamilySync([{ current: retried, write: ending(retried, 'success') }], store.io);
    expect(store.rows.get(PARENT)).toBe(parent);
  });

  it("under 'fail' a failed child fails the parent and cancels its unsettled siblings, which count as settled", () => {
    const parent = waitingParent(3, 0, 'fail');
    const failing = child(1);
    const store = mapStore([parent, failing, child(2, 'pending'), child(3, 'running')]);
    followFamilySync([{ current: failing, write: ending(failing, 'failed') }], store.io);
    expect(store.rows.get(PARENT)).toMatchObject({
      status: 'failed',
      reason: 'CHILD_FAILED',
      children: counts(3, 3, 'fail'),
    });
    expect(store.rows.get(PARENT)?.error?.code).toBe('CHILD_FAILED');
    for (const id of [2, 3]) {
      expect(store.rows.get(`${id}`.padStart(32, 'c'))).toMatchObject({ status: 'cancelled', reason: 'PARENT_FAILED' });
    }
  });

  it('cancels grandchildren too when a parent is cancelled', () => {
    const parent = waitingParent(1, 0);
    const middle = child(1, 'waiting', { children: { total: 1, settled: 0, page: 1, childFailure: 'continue' } });
    const grandchild = runIn('pending', { runId: 'g'.repeat(32), parent: { runId: middle.runId, page: 1 } });
    const store = mapStore([parent, middle, grandchild]);
    const cancel = transition(parent, { type: 'cancel', actor: 'o', reason: 'OPERATOR_STOP' }, 5);
    if (!cancel.ok) throw new Error('refused');
    store.rows.set(PARENT, cancel.run);
    followFamilySync(
      [{ current: parent, write: { run: cancel.run, history: [cancel.history], events: [] } }],
      store.io,
    );
    expect(store.rows.get(middle.runId)).toMatchObject({ status: 'cancelled', reason: 'PARENT_CANCELLED' });
    expect(store.rows.get(grandchild.runId)).toMatchObject({ status: 'cancelled', reason: 'PARENT_CANCELLED' });
    expect(store.rows.get(PARENT)?.children).toEqual(counts(1, 1));
  });

  it('counts no more children than a parent started, and moves a parent only when its counts call for it', () => {
    expect(countChildren(waitingParent(1, 1), 1, 5)).toBeNull();
    expect(countChildren(runIn('pending'), 1, 5)).toBeNull();
    expect(countChildren(waitingParent(3, 1), 5, 5)?.children).toEqual(counts(3, 3));
    expect(planParentMove(waitingParent(2, 1), child(1, 'success'), 'w', 5)).toBeNull();
    expect(planParentMove(waitingParent(2, 2), child(1, 'success'), 'w', 5)?.run).toMatchObject({ status: 'pending' });
  });
});

describe('the family walk over many writes', () => {
  it('counts the children of one parent a batch settled with one step, and wakes the parent once', () => {
    const parent = waitingParent(3, 0);
    const running = [child(1), child(2), child(3)];
    const store = mapStore([parent, ...running]);
    followFamilySync(
      running.map((run) => ({ current: run, write: ending(run, 'success') })),
      store.io,
    );
    expect(store.counts).toEqual([3]);
    expect(store.rows.get(PARENT)).toMatchObject({
      status: 'pending',
      reason: 'CHILDREN_SETTLED',
      children: counts(3, 3),
    });
    expect(store.writes.map((w) => w.run.reason)).toEqual(['CHILDREN_SETTLED']);
  });
});

describe('a parent paused while it waits for children', () => {
  it('waits again on resume while children are unsettled, and is pending once they all are', () => {
    const parent = { ...waitingParent(2, 0), dueAt: 9_000, deadlineAt: 9_000 };
    const paused = transition(parent, { type: 'pause', actor: 'o' }, 10);
    if (!paused.ok) throw new Error('refused');
    expect(paused.run).toMatchObject({ status: 'paused', dueAt: null });
    const resumed = transition(paused.run, { type: 'resume', actor: 'o' }, 20);
    expect(resumed.ok && resumed.run).toMatchObject({ status: 'waiting', reason: 'RESUMED', dueAt: 9_000 });
    const allSettled = { ...paused.run, children: counts(2, 2) };
    const done = transition(allSettled, { type: 'resume', actor: 'o' }, 30);
    expect(done.ok && done.run).toMatchObject({ status: 'pending', reason: 'RESUMED', dueAt: 30 });
  });
});
