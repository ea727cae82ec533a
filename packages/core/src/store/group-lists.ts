/**
 * The groups with claimable runs of each task that claims by group, kept between claims by one store object: listing
 * them costs one index seek per group, so a claim lists them again only when its list is older than
 * `GROUP_LIST_FRESH_MS` or came back short. Limits never depend on the list (a group's leases, claims and hold are read
 * fresh when a claim comes to it); what a stale list changes is only which group goes first, and how soon a group that
 * had no due runs when the list was made is seen (at most `GROUP_LIST_FRESH_MS` later, or at the next short claim).
 */

import { compareGroupTurn, type GroupOrder } from '../machine/flow.js';

/** How long a task's list of groups is used before it is listed again, in milliseconds of the claims' clock. */
export const GROUP_LIST_FRESH_MS = 1000;

/**
 * One listed group: its key, when it was last claimed (`null`: never) and, when the store reads it, the id of the run
 * it gives first (see `compareGroupTurn`).
 */
export interface ListedGroup {
  group_key: string;
  last_claimed_at: number | null;
  head_run_id?: string | null;
}

interface GroupList {
  listedAt: number;
  /** Group key to its listing, its last claim as this connection's claims touched it since. */
  groups: Map<string, ListedGroup>;
}

/** Each task's listed groups, by namespace and task name. */
export class GroupLists {
  private readonly lists = new Map<string, GroupList>();

  /**
   * The task's groups at `now`: the kept list while it is fresh, else `list()` (then kept). `kept` answers whether the
   * kept list was used.
   */
  groups(
    namespace: string,
    task: string,
    now: number,
    list: () => ListedGroup[],
  ): { groups: ListedGroup[]; kept: boolean } {
    const kept = this.kept(namespace, task, now);
    if (kept !== undefined) return { groups: kept, kept: true };
    const listed = list();
    this.keep(namespace, task, now, listed);
    return { groups: listed, kept: false };
  }

  /** The task's kept list while it is fresh at `now` (else `undefined`: list the groups again and `keep` them). */
  kept(namespace: string, task: string, now: number): ListedGroup[] | undefined {
    const kept = this.lists.get(keyOf(namespace, task));
    if (kept === undefined || now < kept.listedAt || now - kept.listedAt >= GROUP_LIST_FRESH_MS) return undefined;
    return [...kept.groups.values()].map((group) => ({ ...group }));
  }

  /** Keeps the task's groups as listed at `now`. */
  keep(namespace: string, task: string, now: number, listed: readonly ListedGroup[]): void {
    this.lists.set(keyOf(namespace, task), {
      listedAt: now,
      groups: new Map(listed.map((row) => [row.group_key, { ...row }])),
    });
  }

  /** Lists the task's groups again at its next claim. */
  forget(namespace: string, task: string): void {
    this.lists.delete(keyOf(namespace, task));
  }

  /** Leaves out a group a claim found without due runs, until the task's groups are listed again. */
  drop(namespace: string, task: string, group: string): void {
    this.lists.get(keyOf(namespace, task))?.groups.delete(group);
  }

  /** Notes that the groups were claimed at `at` (the order of the next claims). */
  touched(namespace: string, task: string, groups: readonly string[], at: number): void {
    const list = this.lists.get(keyOf(namespace, task));
    if (list === undefined) return;
    for (const group of groups) {
      const listed = list.groups.get(group);
      if (listed !== undefined) listed.last_claimed_at = at;
    }
  }
}

const keyOf = (namespace: string, task: string) => `${namespace}\u0000${task}`;

/** A listed group as `compareGroupTurn` orders it. */
function orderOf(group: ListedGroup): GroupOrder {
  return { group: group.group_key, lastClaimedAt: group.last_claimed_at, head: group.head_run_id ?? null };
}

/**
 * The `count` groups a claim comes to first, by what the list knows (the order of `compareGroupTurn`): a claim of at
 * most `count` runs takes at least one run of each group it takes from, so it never needs the scopes of more groups
 * than that.
 */
export function firstInTurn(groups: readonly ListedGroup[], count: number): ListedGroup[] {
  if (groups.length <= count) return [...groups];
  return [...groups].sort((a, b) => compareGroupTurn(orderOf(a), orderOf(b))).slice(0, count);
}

/**
 * The groups a read of due runs came to and found none of, which a kept list leaves out: every group asked for, or,
 * when the read stopped at its limit (`full`), those before the last group it found runs of (it may not have come to
 * the groups after).
 */
export function groupsFoundEmpty(
  asked: readonly { group: string }[],
  found: ReadonlySet<string>,
  full: boolean,
): string[] {
  let reached = asked.length;
  if (full) while (reached > 0 && !found.has(asked[reached - 1]?.group as string)) reached--;
  return asked.slice(0, reached).flatMap((turn) => (found.has(turn.group) ? [] : [turn.group]));
}
