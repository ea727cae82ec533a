import { isTerminal, type RunStatus } from '../machine/run-types.js';
import { runIdTimePrefix } from '../util/ids.js';

/**
 * The run id below which `collect` looks for candidates. Ids start with their creation time, and a run last changed
 * before `runsBefore` was created before it, so a scan by id can stop here.
 */
export function runIdCutoff(runsBefore: number): string {
  return runIdTimePrefix(runsBefore);
}

/** Whether retention lets `collect` delete a run (its callbacks still have to be settled): terminal and old enough. */
export function isExpiredRun(status: RunStatus | string, updatedAt: number, runsBefore: number): boolean {
  return isTerminal(status as RunStatus) && updatedAt < runsBefore;
}
