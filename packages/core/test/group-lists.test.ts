import { describe, expect, it } from 'vitest';
import { GROUP_LIST_FRESH_MS, GroupLists, type ListedGroup } from '../src/store/group-lists.js';

const T0 = 1_000_000;

/** A listing that answers `rows` and counts how often it ran. */
function listing(rows: ListedGroup[]) {
  const calls = { n: 0 };
  const list = () => {
    calls.n++;
    return rows;
  };
  return { calls, list };
}

describe('GroupLists', () => {
  it('keeps a task’s groups while fresh and lists them again once older than GROUP_LIST_FRESH_MS', () => {
    const lists = new GroupLists();
    const { calls, list } = listing([{ group_key: 'a', last_claimed_at: null }]);
    expect(lists.groups('ns', 't', T0, list)).toEqual({
      groups: [{ group_key: 'a', last_claimed_at: null }],
      kept: false,
    });
    expect(lists.groups('ns', 't', T0 + GROUP_LIST_FRESH_MS - 1, list).kept).toBe(true);
    expect(calls.n).toBe(1);
    expect(lists.groups('ns', 't', T0 + GROUP_LIST_FRESH_MS, list).kept).toBe(false);
    // A clock that went back lists again too.
    expect(lists.groups('ns', 't', T0, list).kept).toBe(false);
    expect(calls.n).toBe(3);
    // Another task or namespace has a list of its own.
    expect(lists.groups('other', 't', T0, list).kept).toBe(false);
  });

  it('carries claims made since the listing, drops a group found without due runs, and forgets on request', () => {
    const lists = new GroupLists();
    const { list } = listing([
      { group_key: 'a', last_claimed_at: 5 },
      { group_key: 'b', last_claimed_at: null },
    ]);
    lists.groups('ns', 't', T0, list);
    lists.touched('ns', 't', ['b', 'unknown'], T0);
    lists.drop('ns', 't', 'a');
    expect(lists.groups('ns', 't', T0 + 1, list)).toEqual({
      groups: [{ group_key: 'b', last_claimed_at: T0 }],
      kept: true,
    });
    lists.forget('ns', 't');
    expect(lists.groups('ns', 't', T0 + 2, list).groups).toHaveLength(2);
  });
});
