import { describe, expect, it } from 'vitest';
import { firstInTurn, GroupLists, groupsFoundEmpty } from './group-lists.js';

describe('the groups a claim comes to first', () => {
  it('answers the least recently claimed first (never claimed before all, then by key), at most `count`', () => {
    const groups = [
      { group_key: 'd', last_claimed_at: 300 },
      { group_key: 'c', last_claimed_at: null },
      { group_key: 'b', last_claimed_at: 100 },
      { group_key: 'a', last_claimed_at: null },
      { group_key: 'e', last_claimed_at: 200 },
    ];
    expect(firstInTurn(groups, 3).map((group) => group.group_key)).toEqual(['a', 'c', 'b']);
    expect(firstInTurn(groups, 10)).toHaveLength(5);
  });

  it('among groups claimed alike, answers the one whose head run came first, then by key', () => {
    const groups = [
      { group_key: 'a', last_claimed_at: null, head_run_id: '0003' },
      { group_key: 'z', last_claimed_at: null, head_run_id: '0001' },
      { group_key: 'm', last_claimed_at: 100, head_run_id: '0000' },
      { group_key: 'k', last_claimed_at: null, head_run_id: '0002' },
      { group_key: 'b', last_claimed_at: null },
      { group_key: 'c', last_claimed_at: null },
    ];
    // 'b' and 'c' have no head read: after those with one, by key; 'm', claimed, after all of them.
    expect(firstInTurn(groups, 5).map((group) => group.group_key)).toEqual(['z', 'k', 'a', 'b', 'c']);
    expect(firstInTurn(groups, 2).map((group) => group.group_key)).toEqual(['z', 'k']);
  });

  it("keeps each group's head run with its last claim", () => {
    const lists = new GroupLists();
    lists.keep('ns', 't', 1000, [
      { group_key: 'a', last_claimed_at: null, head_run_id: '0002' },
      { group_key: 'b', last_claimed_at: null, head_run_id: '0001' },
    ]);
    lists.touched('ns', 't', ['b'], 1010);
    expect(lists.kept('ns', 't', 1020)).toEqual([
      { group_key: 'a', last_claimed_at: null, head_run_id: '0002' },
      { group_key: 'b', last_claimed_at: 1010, head_run_id: '0001' },
    ]);
  });

  it('follows the claims this store made since the groups were listed', () => {
    const lists = new GroupLists();
    lists.keep(
      'ns',
      't',
      1000,
      ['a', 'b', 'c', 'd'].map((group_key) => ({ group_key, last_claimed_at: null })),
    );
    lists.touched('ns', 't', ['a', 'b'], 1010);
    const kept = lists.kept('ns', 't', 1020) ?? [];
    expect(firstInTurn(kept, 2).map((group) => group.group_key)).toEqual(['c', 'd']);
  });
});

describe('the groups a read found empty', () => {
  const asked = ['a', 'b', 'c', 'd'].map((group) => ({ group }));

  it('are every group asked for without a run, when the read was not stopped by its limit', () => {
    expect(groupsFoundEmpty(asked, new Set(['b']), false)).toEqual(['a', 'c', 'd']);
  });

  it('leave out the groups after the last one found, when the read stopped at its limit', () => {
    expect(groupsFoundEmpty(asked, new Set(['b']), true)).toEqual(['a']);
    expect(groupsFoundEmpty(asked, new Set(['d']), true)).toEqual(['a', 'b', 'c']);
  });
});
