import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { childrenArb, parentArb } from '../../test/run-arbitraries.js';
import { runIn } from '../../test/run-fixture.js';
import type { RunRecord } from '../machine/run-types.js';
import { RUN_STATUSES } from '../machine/run-types.js';
import { checkWrite } from './checks.js';
import { rowToRun, runChanges, runColumn, runParams } from './run-row.js';
import { RUN_COLUMNS, runRowOf } from './run-row-values.js';

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
    priority: fc.integer({ min: -1000, max: 1000 }),
    retries: fc.nat(),
    traceParent: fc.oneof(fc.constant(null), fc.string()),
    group: fc.oneof(fc.constant(null), fc.string({ minLength: 1 })),
    rateLimited: fc.nat(),
    parent: parentArb,
    children: childrenArb,
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

  it('reports every column when every field is replaced, and none for the same record', () => {
    const before = runIn('running');
    const after: RunRecord = {
      runId: 'x'.repeat(32),
      namespace: 'other',
      taskName: 'other-task',
      taskVersion: '9',
      definitionHash: 'f'.repeat(64),
      status: 'pending',
      reason: before.reason === 'STARTED' ? 'CLAIMED' : 'STARTED',
      query: { other: true },
      state: { s: 1 },
      page: before.page + 1,
      pageFailures: before.pageFailures + 1,
      businessFailures: before.businessFailures + 1,
      scheduledRetries: before.scheduledRetries + 1,
      recoveries: before.recoveries + 1,
      error: { name: 'E', message: 'm' } as RunRecord['error'],
      revision: before.revision + 1,
      trigger: { kind: 'time', at: 1 } as unknown as RunRecord['trigger'],
      dueAt: 123,
      deadlineAt: 456,
      modelCallLimit: 7,
      modelCallsUsed: before.modelCallsUsed + 1,
      idempotencyKey: 'key',
      inputHash: 'h',
      policy: { ...before.policy, attempts: before.policy.attempts + 1 },
      events: ['success'] as unknown as RunRecord['events'],
      recovery: before.recovery === 'automatic' ? 'manual' : 'automatic',
      triggerEvent: { e: 1 } as unknown as RunRecord['triggerEvent'],
      fence: before.fence + 1,
      lease: { owner: 'someone-else', token: 99, expiresAt: 789 },
      createdAt: before.createdAt + 1,
      updatedAt: before.updatedAt + 1,
      priority: before.priority + 1,
      retries: before.retries + 1,
      traceParent: `${before.traceParent}-other`,
      group: `${before.group}-other`,
      rateLimited: before.rateLimited + 1,
      parent: { runId: 'p'.repeat(32), page: 3 },
      children: { total: 2, settled: 1, page: 1, childFailure: 'fail' },
    };
    expect(Object.keys(runChanges(before, after)).sort()).toEqual([...RUN_COLUMNS].sort());
    expect(runChanges(before, before)).toEqual({});
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

describe('runRowOf', () => {
  it('builds the same row from its values in RUN_COLUMNS order (raw statements)', () => {
    fc.assert(
      fc.property(patch, (p) => {
        const row = runParams({ ...runIn('running'), ...p } as RunRecord);
        const distinct = new Set(RUN_COLUMNS.map((c) => JSON.stringify(row[c])));
        expect(runRowOf(RUN_COLUMNS.map((c) => row[c]))).toStrictEqual(row);
        return distinct.size > 1;
      }),
    );
  });
});

describe('runParams', () => {
  it('names the columns in RUN_COLUMNS order, so its values bind by position', () => {
    fc.assert(
      fc.property(patch, (p) => {
        const row = runParams({ ...runIn('running'), ...p } as RunRecord);
        expect(Object.keys(row)).toEqual([...RUN_COLUMNS]);
        expect(Object.values(row)).toEqual(RUN_COLUMNS.map((c) => row[c]));
      }),
    );
  });

  it('gives the JSON of a frozen policy, and of one that is not frozen as it is at each call', () => {
    const run = runIn('pending');
    const frozen = Object.freeze({ ...run.policy, attempts: 7 });
    expect(JSON.parse(runParams({ ...run, policy: frozen }).policy)).toEqual(frozen);
    const open = { ...run.policy, attempts: 2 };
    expect(JSON.parse(runParams({ ...run, policy: open }).policy).attempts).toBe(2);
    open.attempts = 3;
    expect(JSON.parse(runParams({ ...run, policy: open }).policy).attempts).toBe(3);
    expect(JSON.parse(runChanges(run, { ...run, policy: open }).policy as string).attempts).toBe(3);
  });
});
