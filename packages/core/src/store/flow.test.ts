import { describe, expect, it } from 'vitest';
import { EMPTY_SCOPE, type FlowScopeState, type GroupTurn, type TaskFlowState } from '../machine/flow.js';
import { crowdedScope, crowdedTurns, type FlowReader, flowCandidates, flowPlanOf, takesAsMuch } from './flow.js';

const NOW = 50_000;
const STATE: TaskFlowState = {
  flow: { group: { concurrency: 100 } },
  paused: false,
  holdUntil: null,
  groupHoldUntil: null,
};

/** A reader over `groups` groups of `perGroup` due runs (`g<i>-<j>`), counting the group scopes it is asked for. */
function reader(groups: number, perGroup: number, batched: boolean) {
  const scopesRead: string[] = [];
  const mostAsked: number[] = [];
  const dueOf = (group: string, take: number) =>
    Array.from({ length: Math.min(take, perGroup) }, (_, j) => `${group}-${j}`);
  const read: FlowReader<string> = {
    taskScope: () => EMPTY_SCOPE,
    groupTurns: () =>
      Array.from(
        { length: groups },
        (_, i): GroupTurn => ({
          group: `g${String(i).padStart(3, '0')}`,
          lastClaimedAt: NOW - 1000 + i,
          scope: () => {
            scopesRead.push(`g${String(i).padStart(3, '0')}`);
            return EMPTY_SCOPE;
          },
        }),
      ),
    due: (_task, _versions, group, limit) => (group === null ? [] : dueOf(group, limit)),
  };
  if (batched) {
    read.dueOfGroups = (_task, _versions, turns, most) => {
      mostAsked.push(most);
      return turns.flatMap((t) => dueOf(t.group, t.take)).slice(0, most);
    };
  }
  return { read, scopesRead, mostAsked };
}

describe('flowCandidates by group', () => {
  it('reads the scopes of only the groups a claim comes to, least recently claimed first', () => {
    const one = reader(40, 10, false);
    const runs = flowCandidates(one.read, STATE, 't', ['1'], { limit: 25, now: NOW });
    expect(runs).toHaveLength(25);
    expect(runs.slice(0, 11)).toEqual([...Array.from({ length: 10 }, (_, j) => `g000-${j}`), 'g001-0']);
    expect(one.scopesRead).toEqual(['g000', 'g001', 'g002']);

    const batched = reader(40, 10, true);
    expect(flowCandidates(batched.read, STATE, 't', ['1'], { limit: 25, now: NOW })).toEqual(runs);
    // Sixteen groups a statement: the first statement fills the claim, asked for no more runs than the claim takes.
    expect(batched.scopesRead).toHaveLength(16);
    expect(batched.mostAsked).toEqual([25]);
  });

  it('walks on past groups at their limit and says when one reopens, once every group is passed', () => {
    const { read, scopesRead } = reader(5, 2, true);
    const turns = read.groupTurns('t', ['1'], undefined, NOW, NOW);
    read.groupTurns = () =>
      turns.map((turn, i) =>
        i % 2 === 0 ? { ...turn, scope: () => ({ ...EMPTY_SCOPE, holdUntil: NOW + 700 }) } : turn,
      );
    const held: (number | null)[] = [];
    const runs = flowCandidates(read, STATE, 't', ['1'], { limit: 10, now: NOW, heldBack: (at) => held.push(at) });
    expect(runs).toEqual(['g001-0', 'g001-1', 'g003-0', 'g003-1']);
    expect(held).toEqual([NOW + 700]);
    expect(scopesRead).toEqual(['g001', 'g003']);
  });
});

describe('plans on crowded scopes (claims that share a task lock)', () => {
  const limits: TaskFlowState = {
    flow: { concurrency: 100, group: { concurrency: 40 } },
    paused: false,
    holdUntil: null,
    groupHoldUntil: null,
  };
  const turns = (leased: number): GroupTurn[] =>
    ['a', 'b'].map((group) => ({ group, lastClaimedAt: null, scope: () => ({ ...EMPTY_SCOPE, leased }) }));
  const plan = (task: FlowScopeState, groups: GroupTurn[], limit: number) =>
    flowPlanOf(
      limits,
      () => task,
      () => groups,
      { limit, now: NOW },
    );

  it('counts the claims beside it as leases and claims of the task and of every group', () => {
    expect(crowdedScope({ ...EMPTY_SCOPE, leased: 3, claimsInWindow: 4 }, 20)).toMatchObject({
      leased: 23,
      claimsInWindow: 24,
    });
    const [turn] = crowdedTurns(turns(5), 20);
    expect(turn?.scope().leased).toBe(25);
  });

  it('takes as much as alone while every limit has room for the claims beside it, and less once one has not', () => {
    const roomy = plan(EMPTY_SCOPE, turns(0), 10);
    expect(takesAsMuch(plan(crowdedScope(EMPTY_SCOPE, 20), crowdedTurns(turns(0), 20), 10), roomy)).toBe(true);
    // The groups' limit (40) leaves 15 beside 25 leased: crowded by 20, a group gives 0 of the 10 it gives alone.
    const tight = plan(EMPTY_SCOPE, turns(25), 10);
    const crowded = plan(crowdedScope(EMPTY_SCOPE, 20), crowdedTurns(turns(25), 20), 10);
    expect(tight.take).toBe(10);
    expect(crowded.take).toBe(0);
    expect(takesAsMuch(crowded, tight)).toBe(false);
  });
});
