import type { RunStatus } from '../src/machine/run-types.js';
import { newRun, type RunRecord } from '../src/store/index.js';

/** A stored run in `status` with sensible defaults, for feeding the pure machine. */
export function runIn(status: RunStatus, patch: Partial<RunRecord> = {}): RunRecord {
  const running = status === 'running' || status === 'pausing';
  const run = newRun({
    runId: 'a'.repeat(32),
    namespace: 'default',
    taskName: 't',
    taskVersion: '1',
    definitionHash: 'h',
    query: null,
    inputHash: 'x',
    idempotencyKey: null,
    trigger: status === 'waiting' ? { at: new Date(1000).toISOString() } : null,
    dueAt: status === 'waiting' ? 1000 : 0,
    deadlineAt: null,
    modelCallLimit: null,
    policy: { attempts: 3, timeoutMs: 1000, backoff: { baseMs: 100, maxMs: 1000, jitter: 'full' } },
    events: ['success', 'failure', 'batchSettled'],
    recovery: 'automatic',
    createdAt: 0,
  });
  return {
    ...run,
    status,
    revision: 5,
    fence: running ? 7 : 6,
    lease: running ? { owner: 'w', token: 7, expiresAt: 5000 } : null,
    ...patch,
  };
}

/** The store with some of its methods replaced (a failing `open`, `transact` or `collect`), the rest its own. */
export function storeWith<S extends object>(store: S, overrides: Partial<S>): S {
  return Object.assign(Object.create(Object.getPrototypeOf(store)), store, overrides);
}
