import type { BatchHooks } from '../commit-batcher.js';

/**
 * Values held in memory for the open batched commit, written at its end (`flush`): the current item's values are
 * kept when the item ends kept, and dropped with it when it was rolled back to its savepoint. `active` says whether
 * a batch is open (outside one, a caller writes at once).
 */
export abstract class ItemBuffer<T> implements BatchHooks {
  protected active = false;
  protected kept: T[] = [];
  protected item: T[] = [];

  begin(): void {
    this.active = true;
    this.kept = [];
    this.item = [];
  }

  itemEnded(kept: boolean): void {
    if (kept) for (const value of this.item) this.kept.push(value);
    this.item = [];
  }

  abstract flush(): void;

  end(): void {
    this.active = false;
    this.kept = [];
    this.item = [];
  }
}
