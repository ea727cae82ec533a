import type { AppliedWrite, RunRecord, RunWrite } from '@docket/core/store';
import { allHooks, type BatchHooks } from '../commit-batcher.js';
import { ItemBuffer } from './item-buffer.js';

/**
 * The children that succeeded in the open batched commit, counted on their parents at the batch's end: core's
 * `followFamilySync` counts all of a parent's children of the batch in one statement, where each would have run its
 * own. Only a success waits: it can wake its parent (`CHILDREN_SETTLED`) but never fail it, so no cascade of cancels
 * is deferred past a later item of the batch (a claim of a sibling). A parent woken so is written in the same
 * transaction, before its COMMIT. Children of an item rolled back to its savepoint are dropped with it; outside a
 * batch nothing waits.
 */
export class FamilyBuffer extends ItemBuffer<AppliedWrite> {
  constructor(private readonly walk: (writes: readonly AppliedWrite[]) => void) {
    super();
  }

  /** Takes the family walk of a write when it may wait for the batch's end (see the class); answers whether it did. */
  defer(current: RunRecord, write: RunWrite): boolean {
    if (!this.active || !countsOnly(write)) return false;
    this.item.push({ current, write });
    return true;
  }

  /** Walks the kept children's families in the batch's transaction; a throw aborts the batch. */
  flush(): void {
    const kept = this.kept;
    this.end();
    if (kept.length > 0) this.walk(kept);
  }
}

/** Whether a family write only counts its run on its parent: a child's success that starts and awaits no children. */
function countsOnly(write: RunWrite): boolean {
  const run = write.run;
  if (run.status !== 'success' || run.parent === null || write.children !== undefined) return false;
  return run.children === null || run.children.settled >= run.children.total;
}

/**
 * The batch hooks with the family walk first: the parents it writes are one more kept item for the buffers after
 * it (their counts and feed rows), which then write as before.
 */
export function familyFirst(family: FamilyBuffer, rest: BatchHooks): BatchHooks {
  return {
    ...allHooks(family, rest),
    flush: () => {
      family.flush();
      rest.itemEnded(true);
      rest.flush();
    },
  };
}
