import { claimDueAt, isRecoverableAt } from '../../machine/claimable.js';
import { needsFlow, type TaskFlowState } from '../../machine/flow.js';
import type { RunRecord } from '../../machine/run-types.js';
import { checkWrite } from '../checks.js';
import type { SelectRequest, TaskKey } from '../contract.js';
import {
  flowCandidates,
  flowStateOf,
  holdsLeaseAfter,
  mergeCandidates,
  recordFlowClaims,
  tasksByName,
} from '../flow.js';
import { memoryFlowReader, memoryFlowRecorder } from './flow.js';
import { clone, key, type MemoryState, planEach } from './state.js';

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

/**
 * `Store.claimDue`: the runs of the given tasks claimable at `now`, in the claim order (`CLAIMABLE`), within what the
 * flow control of each task allows (`flowCandidates`); the claims a task's rates count are recorded with them.
 */
export function claimDue(m: MemoryState, request: SelectRequest): Promise<RunRecord[]> {
  return m.exclusive(() => {
    const { namespace, now } = request;
    const reader = memoryFlowReader(m, namespace, now);
    const candidates: RunRecord[] = [];
    const flowing = new Map<string, TaskFlowState>();
    for (const [name, versions] of tasksByName(request.tasks)) {
      const state = flowStateOf(m.tasks.get(key(namespace, name)));
      if (state === null || !needsFlow(state, now)) {
        candidates.push(...reader.due(name, versions, null, request.limit));
        continue;
      }
      flowing.set(name, state);
      candidates.push(...flowCandidates(reader, state, name, versions, request));
    }
    const ordered = mergeCandidates(candidates, request.limit);
    const written = planEach(ordered, request.limit, request.plan, (run, write) => {
      checkWrite(run, write);
      m.applyWrite(write);
      return clone(write.run);
    });
    const recorder = memoryFlowRecorder(m, namespace);
    for (const [name, state] of flowing) {
      const claimed = written.filter((run) => run.taskName === name && holdsLeaseAfter(run));
      recordFlowClaims(recorder, state, name, claimed, now);
    }
    return written;
  });
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
