import { describe, expect, it } from 'vitest';
import { runIn } from '../../test/run-fixture.js';
import { RUN_STATUSES } from './run-types.js';
import { TRANSITION_TABLE, type TransitionInput, transition } from './state-machine.js';

const err = { code: 'E', name: 'Error', message: 'm', truncated: false };

describe('state machine', () => {
  it('never changes a terminal run', () => {
    const inputs: TransitionInput[] = [
      { type: 'cancel', actor: 'a', reason: 'CANCELLED' },
      { type: 'resume', actor: 'a' },
      { type: 'claim', actor: 'a', leaseMs: 3000, explicit: true },
    ];
    for (const status of ['success', 'failed', 'cancelled'] as const) {
      for (const input of inputs) {
        expect(transition(runIn(status), input, 2000)).toMatchObject({ ok: false, refusal: 'TERMINAL' });
      }
    }
  });

  it('claims with a new fencing token and a lease of leaseMs', () => {
    const d = transition(runIn('pending'), { type: 'claim', actor: 'worker:x', leaseMs: 3000 }, 2000);
    expect(d.ok && d.run).toMatchObject({
      status: 'running',
      fence: 7,
      lease: { owner: 'worker:x', token: 7, expiresAt: 5000 },
    });
    expect(d.ok && d.history).toMatchObject({ seq: 6, from: 'pending', to: 'running', reason: 'CLAIMED' });
  });

  it('does not claim a retry before its due time, nor a blocked run unless explicit and blocked by a check', () => {
    expect(
      transition(runIn('retrying', { dueAt: 3000 }), { type: 'claim', actor: 'a', leaseMs: 3000 }, 2000),
    ).toMatchObject({
      ok: false,
      refusal: 'NOT_DUE',
    });
    const explicit = { type: 'claim', actor: 'a', leaseMs: 3000, explicit: true } as const;
    expect(
      transition(runIn('blocked', { reason: 'BUSINESS_STATE' }), { type: 'claim', actor: 'a', leaseMs: 3000 }, 2000).ok,
    ).toBe(false);
    for (const reason of ['BUSINESS_STATE', 'BUSINESS_CHANGED'] as const) {
      expect(transition(runIn('blocked', { reason }), explicit, 2000).ok).toBe(true);
    }
    for (const reason of ['RECOVERY_REQUIRED', 'RECOVERY_EXHAUSTED'] as const) {
      expect(transition(runIn('blocked', { reason }), explicit, 2000)).toMatchObject({
        ok: false,
        refusal: 'NOT_ALLOWED',
      });
    }
  });

  it('cancels a claim past the deadline instead of running it', () => {
    const d = transition(runIn('pending', { deadlineAt: 1000 }), { type: 'claim', actor: 'a', leaseMs: 3000 }, 2000);
    expect(d.ok && d.run).toMatchObject({ status: 'cancelled', reason: 'DEADLINE', lease: null });
  });

  it('refuses settles with a stale lease token', () => {
    const d = transition(runIn('running'), { type: 'page_end', actor: 'w', leaseToken: 6 }, 2000);
    expect(d).toMatchObject({ ok: false, refusal: 'LEASE_LOST' });
  });

  it('schedules a retry by the backoff formula and fails after the last attempt', () => {
    const input = {
      type: 'attempt_failed',
      actor: 'w',
      leaseToken: 7,
      error: err,
      timedOut: false,
      random: 0.5,
    } as const;
    const first = transition(runIn('running'), input, 2000);
    expect(first.ok && first.run).toMatchObject({
      status: 'retrying',
      dueAt: 2050,
      pageFailures: 1,
      scheduledRetries: 1,
    });
    const last = transition(runIn('running', { pageFailures: 2 }), input, 2000);
    expect(last.ok && last.run).toMatchObject({ status: 'failed', reason: 'ATTEMPTS_EXHAUSTED', pageFailures: 3 });
  });

  it('moves a pausing run to paused when its page settles', () => {
    const d = transition(runIn('pausing'), { type: 'page_next', actor: 'w', leaseToken: 7, state: { a: 1 } }, 2000);
    expect(d.ok && d.run).toMatchObject({ status: 'paused', reason: 'PAUSED', page: 2, state: { a: 1 } });
  });

  it('recovers by mode and limit', () => {
    const expired = { type: 'lease_expired', actor: 's', recoveryLimit: 2 } as const;
    const auto = transition(runIn('running'), expired, 6000);
    expect(auto.ok && auto.run).toMatchObject({ status: 'retrying', reason: 'LEASE_EXPIRED', recoveries: 1 });
    const limit = transition(runIn('running', { recoveries: 2 }), expired, 6000);
    expect(limit.ok && limit.run).toMatchObject({ status: 'blocked', reason: 'RECOVERY_EXHAUSTED' });
    const manual = transition(runIn('running', { recovery: 'manual' }), expired, 6000);
    expect(manual.ok && manual.run).toMatchObject({ status: 'blocked', reason: 'RECOVERY_REQUIRED' });
    expect(transition(runIn('running'), expired, 4000)).toMatchObject({ ok: false, refusal: 'NOT_DUE' });
  });

  it('emits callback events with stable ids for declared kinds', () => {
    const d = transition(runIn('running', { page: 2 }), { type: 'page_end', actor: 'w', leaseToken: 7 }, 2000);
    expect(d.ok && d.events.map((e) => e.eventId)).toEqual([
      `${'a'.repeat(32)}:2:batchSettled`,
      `${'a'.repeat(32)}:2:success`,
    ]);
    const failed = transition(runIn('pending'), { type: 'cancel', actor: 'p', reason: 'CANCELLED' }, 2000);
    expect(failed.ok && failed.events.map((e) => e.kind)).toEqual(['failure']);
  });

  it('pauses with a live lease to pausing and resumes it to running', () => {
    const pausing = transition(runIn('running'), { type: 'pause', actor: 'operator' }, 2000);
    expect(pausing.ok && pausing.run.status).toBe('pausing');
    const resumed = transition(runIn('pausing'), { type: 'resume', actor: 'operator' }, 2000);
    expect(resumed.ok && resumed.run.status).toBe('running');
    const paused = transition(runIn('running'), { type: 'pause', actor: 'operator' }, 9000);
    expect(paused.ok && paused.run).toMatchObject({ status: 'paused', lease: null });
    const later = transition(runIn('paused', { dueAt: 5000 }), { type: 'resume', actor: 'operator' }, 2000);
    expect(later.ok && later.run.status).toBe('retrying');
  });

  it('has a table row for every status that is not terminal, and none leaving a terminal one but the operator retry of a failed run', () => {
    for (const status of RUN_STATUSES) {
      const leaving = TRANSITION_TABLE.filter((rule) => rule.from.includes(status));
      if (status === 'failed') expect(leaving.map((rule) => [rule.input, rule.to])).toEqual([['retry', 'pending']]);
      else if (['success', 'cancelled'].includes(status)) expect(leaving).toHaveLength(0);
      else expect(leaving.length).toBeGreaterThan(0);
    }
  });
});
