import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runIn } from '../../test/run-fixture.js';
import type { Json } from '../util/json.js';
import { commitDecision, commitGate, plainCommitDecision } from './commit-policy.js';
import { RUN_STATUSES } from './run-types.js';

describe('plainCommitDecision', () => {
  it('decides what commitGate then commitDecision with a passed check decide, for any run, token, deadline and control', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RUN_STATUSES),
        fc.constantFrom(6, 7, 8),
        fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2_000 })),
        fc.constantFrom('next' as const, 'end' as const),
        fc.oneof(fc.constant(null), fc.jsonValue()),
        (status, token, deadlineAt, kind, state) => {
          const current = runIn(status, { deadlineAt });
          const now = 1_000;
          const control = { kind, state: state as Json | null };
          const gate = commitGate(current, token, 'w', now);
          const expected =
            gate.kind === 'lost'
              ? null
              : gate.kind === 'deadline'
                ? gate.write
                : commitDecision(gate.run, token, 'w', control, { ok: true }, {}, now).write;
          expect(plainCommitDecision(current, token, 'w', control, now)).toEqual(expected);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it('writes the settle (or the DEADLINE cancel) of every page that holds its lease, as the two steps do', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('running' as const, 'pausing' as const),
        fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2_000 })),
        fc.constantFrom('next' as const, 'end' as const),
        (status, deadlineAt, kind) => {
          const current = runIn(status, { deadlineAt });
          const control = { kind, state: null };
          const gate = commitGate(current, current.fence, 'w', 1_000);
          if (gate.kind === 'lost') throw new Error('a run in the fixture holds its own fence');
          const expected =
            gate.kind === 'deadline'
              ? gate.write
              : commitDecision(gate.run, current.fence, 'w', control, { ok: true }, {}, 1_000).write;
          const decided = plainCommitDecision(current, current.fence, 'w', control, 1_000);
          expect(decided).not.toBeNull();
          expect(decided).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is null without a row, and cancels with DEADLINE at the deadline itself', () => {
    expect(plainCommitDecision(null, 1, 'w', { kind: 'end', state: null }, 1_000)).toBeNull();
    const running = runIn('running', { deadlineAt: 1_000 });
    const write = plainCommitDecision(running, running.fence, 'w', { kind: 'end', state: null }, 1_000);
    expect(write?.run).toMatchObject({ status: 'cancelled', reason: 'DEADLINE' });
  });
});
