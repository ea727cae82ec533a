import { checkWrite, eventParams, type RunRecord, type RunWrite, runChanges } from '@docket/core/store';
import { applyHold } from '../flow/flow.js';
import type { Statements } from '../statements.js';
import { countFinished, countMove } from './run-counts.js';

/**
 * Applies one conditional run write: the row updated only if it is still `current` (see `Statements.updateRun`), then
 * its history and events, and the counts of `operator.stats()` when the run moves into or out of a counted status,
 * and its minute's count when it settles. Answers `false`, having written nothing, when the row moved.
 */
export function tryApplyWrite(s: Statements, current: RunRecord, write: RunWrite): boolean {
  checkWrite(current, write);
  if (!s.updateRun(current, runChanges(current, write.run))) return false;
  countMove(s, current.namespace, current.taskName, current.taskVersion, current.status, write.run.status);
  countFinished(s, current.namespace, current.status, write.run.status, write.run.updatedAt);
  for (const entry of write.history) s.insertHistory(write.run.runId, entry);
  for (const event of write.events) s.insertEvent.run(eventParams(event));
  if (write.hold !== undefined) applyHold(s, write.run, write.hold);
  return true;
}

/** `tryApplyWrite` for a row read in the same transaction, where a moved row is a bug. */
export function applyWrite(s: Statements, current: RunRecord, write: RunWrite): void {
  if (!tryApplyWrite(s, current, write)) throw new Error(`internal: run ${current.runId} moved during its transaction`);
}
