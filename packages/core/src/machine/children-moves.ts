// The moves of a parent run: starting children, and being woken or failed by them (see `machine/family.ts`).

import { type Decision, type InputOf, moved, notAllowed } from './moved.js';
import { copyRun, type RunRecord } from './run-types.js';

/**
 * A page committed with children: it counts them and waits (`CHILDREN_STARTED`, paused when a pause was asked) with no
 * lease, due only at its deadline, when a claim cancels it (`DEADLINE`).
 */
export function childrenStarted(
  run: RunRecord,
  next: RunRecord,
  input: InputOf<'page_next'>,
  pausing: boolean,
  now: number,
): Decision {
  const started = input.children as { count: number; childFailure: 'continue' | 'fail' };
  next.children = {
    total: (run.children?.total ?? 0) + started.count,
    settled: run.children?.settled ?? 0,
    page: run.page,
    childFailure: started.childFailure,
  };
  const detail = { children: started.count, childFailure: started.childFailure };
  // Paused, it is due at nothing: a resume makes it wait again (due at its deadline) or, all children settled, pending.
  next.dueAt = pausing ? null : run.deadlineAt;
  if (pausing) return moved(run, next, input, 'paused', 'PAUSED', now, detail);
  return moved(run, next, input, 'waiting', 'CHILDREN_STARTED', now, detail);
}

/** Whether children the run started have not all settled yet. */
export function awaitsChildren(run: Pick<RunRecord, 'children'>): boolean {
  return run.children !== null && run.children.settled < run.children.total;
}

/** A waiting parent's children all settled (`pending`), or one failed under `childFailure: 'fail'` (`failed`). */
export function childrenMove(
  run: RunRecord,
  input: InputOf<'children_settled' | 'child_failed'>,
  now: number,
): Decision {
  const next = copyRun(run);
  if (input.type === 'children_settled') {
    if (run.status !== 'waiting' || awaitsChildren(run)) return notAllowed(run, input);
    next.dueAt = now;
    return moved(run, next, input, 'pending', 'CHILDREN_SETTLED', now, input.detail);
  }
  if (run.status !== 'waiting' && run.status !== 'paused') return notAllowed(run, input);
  next.dueAt = null;
  next.error = input.error;
  return moved(run, next, input, 'failed', 'CHILD_FAILED', now, input.detail);
}
