import type { CallbackEventRecord, RunRecord } from '../machine/run-types.js';
import type { RunWrite } from '../machine/run-write.js';

/** Checks a write against the current row: the one comparison every store makes before it writes. */
export function checkWrite(current: RunRecord, write: RunWrite): void {
  if (write.run.runId !== current.runId) throw new Error('internal: write for another run');
  if (write.run.revision !== current.revision + write.history.length) {
    throw new Error(
      `internal: revision ${write.run.revision} does not follow ${current.revision} + ${write.history.length}`,
    );
  }
  for (let index = 0; index < write.history.length; index++) {
    if (write.history[index]?.seq !== current.revision + index + 1) {
      throw new Error('internal: history seq out of order');
    }
  }
  if (write.history.length === 0) checkQuietWrite(current, write.run);
}

/**
 * A write without history (a lease renewal, a budget reservation) may change only the lease's expiry, the model
 * call count and `updatedAt`. Stores rely on it: every other change raises the revision, so comparing the revision,
 * the lease expiry and the model call count tells whether a row is still the one a plan saw. (A parent's children
 * counter is raised by the store's count step, `CountedParent`, while the parent holds no lease.)
 */
/** Equal as stored: the same value, or JSON values with the same text (a store may hand plans a copy). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  return typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b);
}

function checkQuietWrite(current: RunRecord, next: RunRecord): void {
  for (const key of Object.keys(next) as (keyof RunRecord)[]) {
    if (key === 'lease' || key === 'modelCallsUsed' || key === 'updatedAt' || sameValue(next[key], current[key])) {
      continue;
    }
    throw new Error(`internal: a write without history changes ${key}`);
  }
  const before = current.lease;
  const after = next.lease;
  if (before === after) return;
  if (before === null || after === null || before.owner !== after.owner || before.token !== after.token) {
    throw new Error('internal: a write without history changes the lease holder');
  }
}

/** Checks an event write against the current row. */
export function checkEventWrite(current: CallbackEventRecord, write: CallbackEventRecord): void {
  if (write.eventId !== current.eventId) throw new Error('internal: write for another event');
  if (write.revision !== current.revision + 1) {
    throw new Error(`internal: event revision ${write.revision} does not follow ${current.revision}`);
  }
}
