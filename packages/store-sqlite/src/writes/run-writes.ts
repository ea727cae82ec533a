import {
  type AppliedWrite,
  type CountedParent,
  checkWrite,
  childKeyTaken,
  eventParams,
  followFamilySync,
  type NewChildRun,
  type RunRecord,
  type RunWrite,
  runChanges,
  runRowOf,
  touchesFamily,
} from '@docket/core/store';
import { applyHold } from '../flow/flow.js';
import type { Statements } from '../statements.js';
import { countFinished, countMove } from './run-counts.js';

/**
 * Applies one conditional run write: the row updated only if it is still `current` (see `Statements.updateRun`), then
 * its history and events, and the counts of `operator.stats()` when the run moves into or out of a counted status,
 * and its minute's count when it settles; then what it leads to in other runs (`followFamilySync`: its children
 * inserted, its parent counted, its unsettled children cancelled; a child's success is counted at the batch's end,
 * see `FamilyBuffer`). Answers `false`, having written nothing, when the
 * row moved. A child key already taken throws `IDEMPOTENCY_CONFLICT` before anything is written.
 */
export function tryApplyWrite(s: Statements, current: RunRecord, write: RunWrite): boolean {
  checkWrite(current, write);
  const family = touchesFamily(current, write);
  if (family && write.children !== undefined) assertKeysFree(s, write.children);
  if (!applyOne(s, current, write)) return false;
  if (family && !s.family.defer(current, write)) followFamilySync([{ current, write }], familyIo(s));
  return true;
}

/** Walks what `writes`, applied in the open transaction, lead to in other runs (see `tryApplyWrite`). */
export function walkFamilies(s: Statements, writes: readonly AppliedWrite[]): void {
  followFamilySync(writes, familyIo(s));
}

/** `tryApplyWrite` for a row read in the same transaction, where a moved row is a bug. */
export function applyWrite(s: Statements, current: RunRecord, write: RunWrite): void {
  if (!tryApplyWrite(s, current, write)) throw new Error(`internal: run ${current.runId} moved during its transaction`);
}

/** One run's write, its history, events, counts and hold: nothing in other runs. */
function applyOne(s: Statements, current: RunRecord, write: RunWrite): boolean {
  if (!s.updateRun(current, runChanges(current, write.run))) return false;
  countMove(s, current.namespace, current.taskName, current.taskVersion, current.status, write.run.status);
  countFinished(s, current.namespace, current.status, write.run.status, write.run.updatedAt);
  for (const entry of write.history) s.insertHistory(write.run, entry);
  for (const event of write.events) s.insertEvent.run(eventParams(event));
  if (write.hold !== undefined) applyHold(s, write.run, write.hold);
  return true;
}

/** How the family walk reads and writes other runs in the open transaction. */
function familyIo(s: Statements) {
  return {
    count(namespace: string, parentRunId: string, by: number, now: number): CountedParent | null {
      const row = s.reads.countChildren.get(by, now, namespace, parentRunId);
      return row ? { status: row.status as RunRecord['status'], children: JSON.parse(row.children) } : null;
    },
    read(namespace: string, runId: string): RunRecord | null {
      const row = s.selectRun.get(namespace, runId);
      return row ? s.runOf(row) : null;
    },
    unsettled(namespace: string, parentRunId: string): RunRecord[] {
      return s.reads.unsettledChildren.all(namespace, parentRunId).map((values) => s.runOf(runRowOf(values)));
    },
    write(current: RunRecord, write: RunWrite): void {
      checkWrite(current, write);
      if (!applyOne(s, current, write)) throw new Error(`internal: run ${current.runId} moved during its transaction`);
    },
    insert(children: readonly NewChildRun[]): void {
      for (const { run, history } of children) {
        s.insertRun(run);
        s.insertHistory(run, history);
        countMove(s, run.namespace, run.taskName, run.taskVersion, null, run.status);
      }
    },
  };
}

/** Throws `IDEMPOTENCY_CONFLICT` when a child's idempotency key already names a run. */
function assertKeysFree(s: Statements, children: readonly NewChildRun[]): void {
  for (const { run } of children) {
    if (run.idempotencyKey !== null && s.selectRunByKey.get(run.namespace, run.taskName, run.idempotencyKey)) {
      throw childKeyTaken(run);
    }
  }
}
