import { describe, expect, it } from 'vitest';
import { runIn } from '../../test/run-fixture.js';
import {
  claimsByGroup,
  EMPTY_SCOPE,
  FlowGate,
  type FlowScopeState,
  mayClaimByGroup,
  planFlowClaim,
  type TaskFlowState,
} from './flow.js';
import { transition } from './state-machine.js';

const NOW = 10_000;
const scope = (patch: Partial<FlowScopeState>): FlowScopeState => ({ ...EMPTY_SCOPE, ...patch });
const state = (patch: Partial<TaskFlowState>): TaskFlowState => ({
  flow: null,
  paused: false,
  holdUntil: null,
  groupHoldUntil: null,
  ...patch,
});

describe('FlowGate', () => {
  it('allows what the tighter of concurrency and rate leaves, and counts what it admits', () => {
    const gate = new FlowGate(
      { concurrency: 5, rate: { max: 10, perMs: 1000 } },
      scope({ leased: 2, claimsInWindow: 8 }),
      NOW,
    );
    expect(gate.capacity()).toBe(2);
    gate.take();
    expect(gate.capacity()).toBe(1);
    expect(new FlowGate(undefined, scope({ leased: 100 }), NOW).capacity()).toBe(Number.POSITIVE_INFINITY);
  });

  it('says when a closed gate reopens: a hold at its end, a rate at its oldest claim plus the window, else on a lease', () => {
    expect(new FlowGate(undefined, scope({ holdUntil: NOW + 500 }), NOW).reopensAt()).toBe(NOW + 500);
    const rate = { rate: { max: 2, perMs: 1000 } };
    expect(new FlowGate(rate, scope({ claimsInWindow: 2, oldestClaimAt: NOW - 300 }), NOW).reopensAt()).toBe(NOW + 700);
    expect(new FlowGate({ concurrency: 1 }, scope({ leased: 1 }), NOW).reopensAt()).toBeNull();
    // A hold that has passed holds nothing.
    expect(new FlowGate(undefined, scope({ holdUntil: NOW - 1 }), NOW).capacity()).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('planFlowClaim', () => {
  it('claims nothing of a paused task, or of a held one until its hold ends, and says when to try again', () => {
    expect(
      planFlowClaim({ state: state({ paused: true }), task: EMPTY_SCOPE, groups: [], limit: 8, now: NOW }),
    ).toMatchObject({ take: 0, heldBack: null });
    expect(
      planFlowClaim({ state: state({ holdUntil: NOW + 50 }), task: EMPTY_SCOPE, groups: [], limit: 8, now: NOW }),
    ).toMatchObject({ take: 0, heldBack: NOW + 50 });
  });

  it('takes what the task allows in claim order when there are no group limits', () => {
    const plan = planFlowClaim({
      state: state({ flow: { concurrency: 3 } }),
      task: scope({ leased: 1 }),
      groups: [],
      limit: 8,
      now: NOW,
    });
    expect(plan).toEqual({ mode: 'all', take: 2, groups: [], heldBack: null });
    expect(
      planFlowClaim({ state: state({ flow: { concurrency: 30 } }), task: EMPTY_SCOPE, groups: [], limit: 8, now: NOW }),
    ).toEqual({ mode: 'all', take: 8, groups: [] });
  });

  it('goes group by group, least recently claimed first, skipping a group at its limit without holding the others', () => {
    const plan = planFlowClaim({
      state: state({ flow: { concurrency: 3, group: { concurrency: 1 } } }),
      task: EMPTY_SCOPE,
      groups: [
        { group: 'b', lastClaimedAt: NOW - 10, scope: () => EMPTY_SCOPE },
        { group: 'full', lastClaimedAt: null, scope: () => scope({ leased: 1 }) },
        { group: 'a', lastClaimedAt: NOW - 100, scope: () => EMPTY_SCOPE },
        { group: 'new', lastClaimedAt: null, scope: () => EMPTY_SCOPE },
        { group: 'c', lastClaimedAt: NOW - 5, scope: () => EMPTY_SCOPE },
      ],
      limit: 8,
      now: NOW,
    });
    expect(plan.groups).toEqual([
      { group: 'new', take: 1 },
      { group: 'a', take: 1 },
      { group: 'b', take: 1 },
    ]);
    expect(plan).toMatchObject({ mode: 'groups', take: 3, heldBack: null });
  });
});

describe('mayClaimByGroup', () => {
  it('is true whenever claimsByGroup is, at any time, and only for group limits or a group hold', () => {
    const flows = [null, { concurrency: 2 }, { group: { concurrency: 1 } }, { group: { rate: { max: 1, perMs: 10 } } }];
    for (const flow of flows) {
      for (const groupHoldUntil of [null, 1_000]) {
        const state: TaskFlowState = { flow, paused: false, holdUntil: null, groupHoldUntil };
        const may = mayClaimByGroup(state);
        expect(may).toBe(flow?.group !== undefined || groupHoldUntil !== null);
        for (const now of [0, 999, 1_000, 5_000]) if (claimsByGroup(state, now)) expect(may).toBe(true);
      }
    }
  });
});

describe("the state machine's RATE_LIMITED", () => {
  const err = { code: 'E', name: 'RetryAfterError', message: '429', truncated: false };
  const failed = (hold: 'run' | 'group' | 'task') =>
    ({
      type: 'attempt_failed',
      actor: 'w',
      leaseToken: 7,
      error: err,
      timedOut: false,
      random: 0,
      retryAfterMs: 500,
      hold,
    }) as const;

  it('sends a held run back to retrying due when the hold ends, consuming no attempt', () => {
    const d = transition(runIn('running'), failed('task'), NOW);
    expect(d.ok && d.run).toMatchObject({
      status: 'retrying',
      reason: 'RATE_LIMITED',
      dueAt: NOW + 500,
      pageFailures: 0,
      businessFailures: 0,
      rateLimited: 1,
    });
    expect(d.ok && d.history.detail).toEqual({ code: 'E', message: '429', hold: 'task' });
  });

  it('counts each hold from the 101st on as a failed attempt, and a run hold as before', () => {
    const d = transition(runIn('running', { rateLimited: 100 }), failed('group'), NOW);
    expect(d.ok && d.run).toMatchObject({
      status: 'retrying',
      reason: 'ATTEMPT_FAILED',
      pageFailures: 1,
      rateLimited: 101,
    });
    const run = transition(runIn('running'), failed('run'), NOW);
    expect(run.ok && run.run).toMatchObject({ reason: 'ATTEMPT_FAILED', pageFailures: 1, rateLimited: 0 });
  });
});
