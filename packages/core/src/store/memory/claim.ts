import { claimDueAt, claimRankOf, compareClaimOrder, isClaimableAt, isRecoverableAt } from '../../machine/claimable.js';
import type { RunRecord } from '../../machine/run-types.js';
import { checkWrite } from '../checks.js';
import type { SelectRequest, TaskKey } from '../contract.js';
import { clone, type MemoryState, planEach } from './state.js';

function taskMatches(run: RunRecord, tasks: readonly TaskKey[]): boolean {
  return tasks.some((t) => t.name === run.taskName && t.version === run.taskVersion);
}

function select(
  m: MemoryState,
  request: Pick<SelectRequest, 'namespace' | 'limit' | 'plan'>,
  match: (run: RunRecord) => boolean,
  order: (a: RunRecord, b: RunRecord) => number,
): RunRecord[] {
  const candidates = [...m.runs.values()]
    .filter((run) => run.namespace === request.namespace && match(run))
    .sort(order);
  return planEach(candidates, request.limit, request.plan, (run, write) => {
    checkWrite(run, write);
    m.applyWrite(write);
    return clone(write.run);
  });
}

/** `Store.claimDue`: the runs of the given tasks claimable at `now`, in the claim order (`CLAIMABLE`). */
export function claimDue(m: MemoryState, request: SelectRequest): Promise<RunRecord[]> {
  const due = (run: RunRecord) => isClaimableAt(run, request.now) && taskMatches(run, request.tasks);
  return m.exclusive(() => select(m, request, due, (a, b) => compareClaimOrder(claimRankOf(a), claimRankOf(b))));
}

/** `Store.recoverExpired`: running or pausing runs whose lease expired, earliest expiry first. */
export function recoverExpired(m: MemoryState, request: Omit<SelectRequest, 'tasks'>): Promise<RunRecord[]> {
  const expired = (run: RunRecord) => isRecoverableAt(run, request.now);
  return m.exclusive(() =>
    select(
      m,
      request,
      expired,
      (a, b) => (a.lease?.expiresAt ?? 0) - (b.lease?.expiresAt ?? 0) || a.createdAt - b.createdAt,
    ),
  );
}

/** `Store.nextDueAt`. */
export async function nextDueAt(m: MemoryState, namespace: string, tasks: readonly TaskKey[]): Promise<number | null> {
  let earliest: number | null = null;
  for (const run of m.runs.values()) {
    if (run.namespace !== namespace || !taskMatches(run, tasks)) continue;
    const due = claimDueAt(run);
    if (due !== null && (earliest === null || due < earliest)) earliest = due;
  }
  return earliest;
}
