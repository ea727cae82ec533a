import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runIn } from '../../test/run-fixture.js';
import type { PlainClaim } from './claim-policy.js';
import { isPlainClaimOf, planClaim, qualifiesForPlainClaim } from './claim-policy.js';
import { iso, RUN_STATUSES, type RunRecord } from './run-types.js';

const NOW = 10_000;
const LEASE_MS = 30_000;
const claim: PlainClaim = { actor: 'worker:a', leaseExpiresAt: NOW + LEASE_MS, at: iso(NOW) };

/** A time before, at or after `NOW`, or none. */
const time = fc.oneof(fc.constant(null), fc.constantFrom(NOW - 1, NOW, NOW + 1), fc.nat({ max: 3 * NOW }));

describe('the plain claim', () => {
  it('is what planClaim writes exactly for the runs that qualify, whatever their status, due time and deadline', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RUN_STATUSES),
        time,
        time,
        fc.nat({ max: 50 }),
        fc.nat({ max: 50 }),
        fc.boolean(),
        (status, dueAt, deadlineAt, revision, fence, events) => {
          const run = runIn(status, { dueAt, deadlineAt, revision, fence, ...(events ? {} : { events: [] }) });
          const write = planClaim(run, claim.actor, LEASE_MS, NOW);
          const plain = write !== null && isPlainClaimOf(run, write, claim, NOW);
          expect(plain).toBe(qualifiesForPlainClaim(run, NOW));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('qualifies pending runs, due retries, and nothing past its deadline', () => {
    expect(qualifiesForPlainClaim(runIn('pending', { dueAt: NOW + 5 }), NOW)).toBe(true);
    expect(qualifiesForPlainClaim(runIn('retrying', { dueAt: NOW }), NOW)).toBe(true);
    expect(qualifiesForPlainClaim(runIn('retrying', { dueAt: NOW + 1 }), NOW)).toBe(false);
    expect(qualifiesForPlainClaim(runIn('pending', { deadlineAt: NOW }), NOW)).toBe(false);
    expect(qualifiesForPlainClaim(runIn('pending', { deadlineAt: NOW + 1 }), NOW)).toBe(true);
    expect(qualifiesForPlainClaim(runIn('waiting', { dueAt: NOW - 1 }), NOW)).toBe(false);
    expect(qualifiesForPlainClaim(runIn('blocked'), NOW)).toBe(false);
  });

  it('refuses a write that differs from the description in any column or in its history', () => {
    const run = runIn('pending');
    const write = planClaim(run, claim.actor, LEASE_MS, NOW);
    if (write === null) throw new Error('expected a claim');
    expect(isPlainClaimOf(run, write, claim, NOW)).toBe(true);
    const lease = write.run.lease ?? { owner: '', token: 0, expiresAt: 0 };
    const variants = [
      { ...write, run: { ...write.run, state: { moved: true } } },
      { ...write, run: { ...write.run, recoveries: 3 } },
      { ...write, run: { ...write.run, lease: { ...lease, owner: 'worker:b' } } },
      { ...write, run: { ...write.run, lease: { ...lease, expiresAt: lease.expiresAt + 1 } } },
      { ...write, run: { ...write.run, updatedAt: NOW + 1 } },
      { ...write, history: write.history.map((entry) => ({ ...entry, at: iso(NOW + 1) })) },
      { ...write, history: write.history.map((entry) => ({ ...entry, detail: { why: 'x' } })) },
      { ...write, history: [] },
    ];
    for (const variant of variants) expect(isPlainClaimOf(run, variant, claim, NOW)).toBe(false);
    expect(isPlainClaimOf(run, write, { ...claim, actor: 'worker:b' }, NOW)).toBe(false);
  });

  it('refuses a write that changes any field of the record by identity, or adds one', () => {
    const run = runIn('pending');
    const write = planClaim(run, claim.actor, LEASE_MS, NOW);
    if (write === null) throw new Error('expected a claim');
    for (const field of Object.keys(write.run)) {
      const changed = { ...write, run: { ...write.run, [field]: { changed: field } } };
      expect(isPlainClaimOf(run, changed, claim, NOW), field).toBe(false);
    }
    const added = { ...write, run: { ...write.run, extra: 1 } as RunRecord };
    expect(isPlainClaimOf(run, added, claim, NOW)).toBe(false);
  });
});
