import type { RunStatus } from '../src/machine/run-types.js';
import type { RunRecord } from '../src/store/index.js';

/** A stored run in `status` with sensible defaults, for feeding the pure machine. */
export function runIn(status: RunStatus, patch: Partial<RunRecord> = {}): RunRecord {
  const running = status === 'running' || status === 'pausing';
  return {
    runId: 'a'.repeat(32),
    namespace: 'default',
    taskName: 't',
    taskVersion: '1',
    definitionHash: 'h',
    status,
    reason: 'STARTED',
    query: null,
    state: null,
    page: 1,
    pageFailures: 0,
    businessFailures: 0,
    scheduledRetries: 0,
    recoveries: 0,
    error: null,
    revision: 5,
    trigger: status === 'waiting' ? { at: new Date(1000).toISOString() } : null,
    dueAt: status === 'waiting' ? 1000 : 0,
    deadlineAt: null,
    modelCallLimit: null,
    modelCallsUsed: 0,
    idempotencyKey: null,
    inputHash: 'x',
    policy: { attempts: 3, timeoutMs: 1000, backoff: { baseMs: 100, maxMs: 1000, jitter: 'full' } },
    events: ['success', 'failure', 'batchSettled'],
    recovery: 'automatic',
    triggerEvent: null,
    fence: running ? 7 : 6,
    lease: running ? { owner: 'w', token: 7, expiresAt: 5000 } : null,
    createdAt: 0,
    updatedAt: 0,
    ...patch,
  };
}
