import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runIn } from '../../test/run-fixture.js';
import { planClaim } from './claim-policy.js';
import {
  CLAIMABLE,
  claimDueAt,
  claimRankOf,
  compareClaimOrder,
  isClaimableAt,
  isExplicitlyClaimableAt,
  isRecoverableAt,
} from './claimable.js';
import { RUN_STATUSES } from './run-types.js';

const NOW = 10_000;
const time = fc.oneof(fc.constant(null), fc.constantFrom(NOW - 1, NOW, NOW + 1), fc.nat({ max: 3 * NOW }));

describe('which runs are claimable', () => {
  it('selects exactly the runs of a claimable status whose due time has come', () => {
    fc.assert(
      fc.property(fc.constantFrom(...RUN_STATUSES), time, (status, dueAt) => {
        const run = runIn(status, { dueAt });
        const expected = (CLAIMABLE.statuses as readonly string[]).includes(status) && dueAt !== null && dueAt <= NOW;
        expect(isClaimableAt(run, NOW)).toBe(expected);
        expect(claimDueAt(run)).toBe((CLAIMABLE.statuses as readonly string[]).includes(status) ? dueAt : null);
      }),
      { numRuns: 500 },
    );
  });

  it('gives every run a worker would claim a plan that claims it or fires its trigger', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CLAIMABLE.statuses), time, (status, dueAt) => {
        const run = runIn(status, { dueAt });
        if (!isClaimableAt(run, NOW)) return;
        const write = planClaim(run, 'worker:a', 30_000, NOW);
        expect(write).not.toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it('orders by priority, then due time, then creation', () => {
    const a = claimRankOf(runIn('pending', { priority: 5, dueAt: 30, createdAt: 3 }));
    const b = claimRankOf(runIn('pending', { priority: 1, dueAt: 10, createdAt: 1 }));
    const c = claimRankOf(runIn('retrying', { priority: 1, dueAt: 20, createdAt: 0 }));
    const d = claimRankOf(runIn('retrying', { priority: 1, dueAt: 20, createdAt: 2 }));
    expect([d, c, b, a].sort(compareClaimOrder)).toEqual([a, b, c, d]);
  });

  it('recovers running and pausing runs whose lease expired, nothing else', () => {
    const lease = (expiresAt: number) => ({ owner: 'worker:a', token: 1, expiresAt });
    expect(isRecoverableAt(runIn('running', { lease: lease(NOW) }), NOW)).toBe(true);
    expect(isRecoverableAt(runIn('pausing', { lease: lease(NOW - 1) }), NOW)).toBe(true);
    expect(isRecoverableAt(runIn('running', { lease: lease(NOW + 1) }), NOW)).toBe(false);
    expect(isRecoverableAt(runIn('pending', { lease: null }), NOW)).toBe(false);
  });

  it('lets task.run claim pending and blocked runs before their time, and waiting runs only for a due time trigger', () => {
    expect(isExplicitlyClaimableAt(runIn('pending', { dueAt: NOW + 100 }), NOW)).toBe(true);
    expect(isExplicitlyClaimableAt(runIn('blocked', { dueAt: null }), NOW)).toBe(true);
    expect(isExplicitlyClaimableAt(runIn('retrying', { dueAt: NOW + 1 }), NOW)).toBe(false);
    expect(isExplicitlyClaimableAt(runIn('retrying', { dueAt: NOW }), NOW)).toBe(true);
    expect(
      isExplicitlyClaimableAt(runIn('waiting', { dueAt: NOW, trigger: { at: new Date(NOW).toISOString() } }), NOW),
    ).toBe(true);
    expect(isExplicitlyClaimableAt(runIn('waiting', { dueAt: NOW, trigger: { event: 'ready' } }), NOW)).toBe(false);
  });
});
