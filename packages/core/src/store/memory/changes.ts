// The memory store's changes feed: entries appended under the store's one lock, so their order is commit order.
import type { ChangesAnswer, ChangesRequest, StoredChange, TrimChangesRequest } from '../changes.js';
import { clone, key, type MemoryState } from './state.js';

/** `Store.readChanges`: a slice of the feed after a position (binary search: the array ascends by position). */
export async function readChanges(m: MemoryState, request: ChangesRequest): Promise<ChangesAnswer> {
  const floor = m.feedFloors.get(request.namespace) ?? 0;
  const after = request.after ?? floor;
  const changes: StoredChange[] = [];
  for (let i = firstAfter(m.feed, after); i < m.feed.length && changes.length < request.limit; i++) {
    const { namespace, change } = m.feed[i] as MemoryState['feed'][number];
    if (namespace !== request.namespace) continue;
    if (request.taskName !== null && change.taskName !== request.taskName) continue;
    // A run retention deleted takes its entries out of the feed, as the SQL stores' join with history does.
    if (!m.history.has(key(namespace, change.runId))) continue;
    changes.push(clone(change));
  }
  return { changes, floor };
}

/** `Store.changesHead`: the namespace's last entry's position, else its floor. */
export async function changesHead(m: MemoryState, namespace: string): Promise<number> {
  for (let i = m.feed.length - 1; i >= 0; i--) {
    const item = m.feed[i] as MemoryState['feed'][number];
    if (item.namespace === namespace) return item.change.position;
  }
  return m.feedFloors.get(namespace) ?? 0;
}

/** `Store.trimChanges`: the namespace's oldest entries before `before`, up to `limit`, and its floor raised. */
export function trimChanges(m: MemoryState, request: TrimChangesRequest): Promise<number> {
  return m.exclusive(() => {
    let removed = 0;
    let floor = m.feedFloors.get(request.namespace) ?? 0;
    const kept: MemoryState['feed'] = [];
    let open = true;
    for (const item of m.feed) {
      const mine = item.namespace === request.namespace;
      if (mine && open && removed < request.limit && Date.parse(item.change.entry.at) < request.before) {
        removed++;
        floor = item.change.position;
        continue;
      }
      if (mine) open = false;
      kept.push(item);
    }
    m.feed.splice(0, m.feed.length, ...kept);
    m.feedFloors.set(request.namespace, floor);
    return removed;
  });
}

/** The index of the first item whose position is above `after`. */
function firstAfter(feed: MemoryState['feed'], after: number): number {
  let low = 0;
  let high = feed.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((feed[mid] as MemoryState['feed'][number]).change.position <= after) low = mid + 1;
    else high = mid;
  }
  return low;
}
