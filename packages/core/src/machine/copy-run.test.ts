import { describe, expect, it } from 'vitest';
import { runIn } from '../../test/run-fixture.js';
import { rowToRun, runParams } from '../store/run-row.js';
import { copyRun, RUN_STATUSES } from './run-types.js';
import { transition } from './state-machine.js';

describe('copyRun', () => {
  it('copies every field of a record, in the order of a record read from a row', () => {
    for (const status of RUN_STATUSES) {
      const run = runIn(status);
      const copy = copyRun(run);
      expect(copy).toEqual(run);
      expect(copy).not.toBe(run);
      expect(Object.keys(copy)).toEqual(Object.keys(rowToRun(runParams(run))));
    }
  });

  it('makes a record of its own: changing the copy leaves the original as it was', () => {
    const run = runIn('running');
    const copy = copyRun(run);
    copy.status = 'success';
    copy.lease = null;
    expect(run.status).toBe('running');
    expect(run.lease).not.toBeNull();
  });

  it('is what a transition writes on: the decided record keeps the field order through claim and settle', () => {
    const pending = rowToRun(runParams(runIn('pending')));
    const claimed = transition(pending, { type: 'claim', actor: 'w', leaseMs: 1_000 }, pending.createdAt + 1);
    if (!claimed.ok) throw new Error('claim refused');
    const ended = transition(
      claimed.run,
      { type: 'page_end', actor: 'w', leaseToken: claimed.run.fence },
      pending.createdAt + 2,
    );
    if (!ended.ok) throw new Error('settle refused');
    expect(Object.keys(claimed.run)).toEqual(Object.keys(pending));
    expect(Object.keys(ended.run)).toEqual(Object.keys(pending));
    expect(ended.run.status).toBe('success');
  });
});
