import type { ScheduleRecord } from '../../machine/schedule-types.js';
import type { DueSchedulesRequest, ListSchedulesRequest, SchedulePlan } from '../contract.js';
import { clone, key, type MemoryState } from './state.js';

/** `Store.transactSchedule`: the plan with copies of the schedule and receipt, then its writes, in one step. */
export function transactSchedule<T>(
  m: MemoryState,
  namespace: string,
  id: string,
  plan: SchedulePlan<T>,
  commandId?: string,
): Promise<T> {
  return m.exclusive(() => {
    const k = key(namespace, id);
    const stored = commandId === undefined ? undefined : m.commands.get(key(namespace, commandId));
    const receipt = stored === undefined ? null : { requestHash: stored.requestHash, result: clone(stored.result) };
    const decided = plan(clone(m.schedules.get(k) ?? null), receipt);
    if (decided.schedule === 'delete') m.schedules.delete(k);
    else if (decided.schedule !== null) m.schedules.set(k, clone(decided.schedule));
    for (const { run, history } of decided.runs) {
      const idemKey = m.idempotencyKeyOf(run);
      if (idemKey !== null && m.idempotency.has(idemKey)) continue;
      m.runs.set(key(run.namespace, run.runId), clone(run));
      m.addHistory(run, [history]);
      if (idemKey !== null) m.idempotency.set(idemKey, run.runId);
    }
    if (decided.receipt !== null) {
      const { commandId: receiptId, requestHash, result } = decided.receipt;
      m.commands.set(key(namespace, receiptId), { requestHash, result: clone(result), createdAt: Date.now() });
    }
    return decided.value;
  });
}

/** `Store.dueSchedules`. */
export async function dueSchedules(m: MemoryState, request: DueSchedulesRequest): Promise<ScheduleRecord[]> {
  return [...m.schedules.values()]
    .filter(
      (s) =>
        s.namespace === request.namespace &&
        s.enabled &&
        s.nextAt !== null &&
        s.nextAt <= request.now &&
        request.tasks.some((t) => t.name === s.taskName && t.version === s.taskVersion),
    )
    .sort((a, b) => (a.nextAt ?? 0) - (b.nextAt ?? 0))
    .slice(0, request.limit)
    .map(clone);
}

/** `Store.listSchedules`. */
export async function listSchedules(m: MemoryState, request: ListSchedulesRequest): Promise<ScheduleRecord[]> {
  return [...m.schedules.values()]
    .filter((s) => s.namespace === request.namespace && (request.after === null || s.id > request.after))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, request.limit)
    .map(clone);
}
