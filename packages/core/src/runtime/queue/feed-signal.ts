import type { Store } from '../../store/contract.js';

/** The store verbs that write history: a watcher in this process wakes when one of them settles. */
const HISTORY_WRITERS = [
  'transact',
  'createRun',
  'createRuns',
  'claimDue',
  'recoverExpired',
  'runCommand',
  'transactSchedule',
] as const;

/**
 * This process's own history writes, as a signal for `queue.watch`: the queue's store is seen through `observe`, which
 * tells the listeners after each write verb settles. With no listener a write costs one size check, and a verb that
 * answers synchronously (SQLite's thenable) still does.
 */
export class FeedSignal {
  private readonly listeners = new Set<() => void>();

  /** Calls `listener` after each history write of this process; returns the unsubscribe function. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The store with its write verbs telling the listeners; every other member is the store's own. */
  observe<Tx>(store: Store<Tx>): Store<Tx> {
    const observed = Object.create(store) as Record<string, unknown>;
    for (const name of HISTORY_WRITERS) {
      const verb = (store[name] as (...args: unknown[]) => unknown).bind(store);
      observed[name] = (...args: unknown[]) => {
        const answer = verb(...args);
        if (this.listeners.size > 0) void Promise.resolve(answer).then(this.fire, this.fire);
        return answer;
      };
    }
    return observed as unknown as Store<Tx>;
  }

  private readonly fire = (): void => {
    for (const listener of this.listeners) listener();
  };
}
