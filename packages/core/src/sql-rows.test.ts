import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runIn } from '../test/run-fixture.js';
import { RUN_COLUMNS, rowToRun, runChanges, runColumn, runParams } from './sql-rows.js';
import { checkWrite } from './store.js';
import type { RunRecord } from './types.js';
import { RUN_STATUSES } from './types.js';

/** Arbitrary changes to a run, each field replaced (or kept) independently. */
const patch = fc.record(
  {
    status: fc.constantFrom(...RUN_STATUSES),
    reason: fc.constantFrom('CLAIMED', 'COMPLETED', 'RETRY_SCHEDULED' as const),
    query: fc.jsonValue(),
    state: fc.oneof(fc.constant(null), fc.jsonValue()),
    page: fc.nat(),
    pageFailures: fc.nat(),
    revision: fc.nat(),
    dueAt: fc.oneof(fc.constant(null), fc.nat()),
    modelCallsUsed: fc.nat(),
    fence: fc.nat(),
    lease: fc.oneof(fc.constant(null), fc.record({ owner: fc.string(), token: fc.nat(), expiresAt: fc.nat() })),
    error: fc.oneof(fc.constant(null), fc.record({ name: fc.string(), message: fc.string() })),
    updatedAt: fc.nat(),
  },
  { requiredKeys: [] },
);

describe('runChanges', () => {
  it('encodes exactly the columns whose value differs, so the row before plus the changes is the row after', () => {
    fc.assert(
      fc.property(fc.constantFrom(...RUN_STATUSES), patch, (status, changes) => {
        const before = runIn(status);
        const after = { ...before, ...changes } as RunRecord;
        const delta = runChanges(before, after);
        expect({ ...runParams(before), ...delta }).toEqual(runParams(after));
        for (const column of Object.keys(delta)) expect(RUN_COLUMNS).toContain(column);
        for (const column of RUN_COLUMNS) expect(runColumn(after, column)).toEqual(runParams(after)[column]);
      }),
      { numRuns: 500 },
    );
  });

  it('leaves out unchanged JSON columns without serialising them', () => {
    const before = runIn('running');
    const after = { ...before, status: 'success' as const, lease: null };
    expect(Object.keys(runChanges(before, after)).sort()).toEqual([
      'lease_expires_at',
      'lease_owner',
      'lease_token',
      'status',
    ]);
  });
});

describe('rowToRun', () => {
  it('shares one frozen parse of a policy that many rows hold word for word', () => {
    const row = runParams(runIn('pending'));
    const a = rowToRun(row);
    const b = rowToRun({ ...row, run_id: 'b'.repeat(32) });
    expect(a.policy).toBe(b.policy);
    expect(Object.isFrozen(a.policy)).toBe(true);
    expect(a.policy).toEqual(runIn('pending').policy);
  });
});

describe('checkWrite', () => {
  it('refuses a write without history that changes more than the lease expiry and the model call count', () => {
    const current = runIn('running');
    const renewal = { ...current, lease: { ...current.lease!, expiresAt: 9000 }, updatedAt: 1 };
    expect(() => checkWrite(current, { run: renewal, history: [], events: [] })).not.toThrow();
    const budget = { ...current, modelCallsUsed: 1 };
    expect(() => checkWrite(current, { run: budget, history: [], events: [] })).not.toThrow();
    const sneaky = { ...current, state: { moved: true } };
    expect(() => checkWrite(current, { run: sneaky, history: [], events: [] })).toThrow(/changes state/);
    const stolen = { ...current, lease: { ...current.lease!, owner: 'other' } };
    expect(() => checkWrite(current, { run: stolen, history: [], events: [] })).toThrow(/lease holder/);
  });
});
