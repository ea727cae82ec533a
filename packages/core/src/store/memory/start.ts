import type { RunRecord } from '../../machine/run-types.js';
import { DocketError } from '../../util/errors.js';
import type { CreateRunRequest, CreateRunResult, CreateRunsRequest, CreateRunsResult } from '../contract.js';
import { planStarts } from '../start-plan.js';
import { clone, key, type MemoryState } from './state.js';

/** `Store.createRun`: the existing run for a known key, `capacity` at `maxRuns`, or the new run and its entry. */
export function createRun(m: MemoryState, request: CreateRunRequest): Promise<CreateRunResult> {
  return m.exclusive((): CreateRunResult => {
    const { run } = request;
    const idemKey = m.idempotencyKeyOf(run);
    if (idemKey !== null) {
      const existingId = m.idempotency.get(idemKey);
      const existing = existingId === undefined ? undefined : m.runs.get(key(run.namespace, existingId));
      if (existing) return { kind: 'existing', run: clone(existing) };
    }
    if (request.maxRuns !== null) {
      let live = 0;
      for (const r of m.runs.values()) if (r.namespace === run.namespace) live++;
      if (live >= request.maxRuns) return { kind: 'capacity' };
    }
    m.runs.set(key(run.namespace, run.runId), clone(run));
    m.addHistory(run, [request.history]);
    if (idemKey !== null) m.idempotency.set(idemKey, run.runId);
    return { kind: 'created', run: clone(run) };
  });
}

/** `Store.createRuns`: core's plan over the runs the keys name, then every new run, all in one exclusive step. */
export function createRuns(m: MemoryState, request: CreateRunsRequest): Promise<CreateRunsResult> {
  if (request.tx !== undefined) {
    const message = 'the memory store has no application transactions: start without tx';
    return Promise.reject(new DocketError('CONFIG_INVALID', message, { operation: 'task.start' }));
  }
  return m.exclusive((): CreateRunsResult => {
    const existing = new Map<string, RunRecord>();
    for (const { run } of request.runs) {
      const idemKey = m.idempotencyKeyOf(run);
      const id = idemKey === null ? undefined : m.idempotency.get(idemKey);
      const found = id === undefined ? undefined : m.runs.get(key(run.namespace, id));
      if (found && run.idempotencyKey !== null) existing.set(run.idempotencyKey, clone(found));
    }
    const plan = planStarts(request.runs, existing);
    if (plan.kind !== 'ok') return plan;
    const namespace = request.runs[0]?.run.namespace;
    if (request.maxRuns !== null && plan.insert.length > 0) {
      let live = 0;
      for (const r of m.runs.values()) if (r.namespace === namespace) live++;
      if (live + plan.insert.length > request.maxRuns) return { kind: 'capacity' };
    }
    for (const index of plan.insert) {
      const { run, history } = request.runs[index] as CreateRunsRequest['runs'][number];
      m.runs.set(key(run.namespace, run.runId), clone(run));
      m.addHistory(run, [history]);
      const idemKey = m.idempotencyKeyOf(run);
      if (idemKey !== null) m.idempotency.set(idemKey, run.runId);
    }
    return plan;
  });
}
