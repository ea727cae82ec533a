import { describe } from 'vitest';
import { batchingSuite } from './batching.js';
import { budgetsSuite } from './budgets.js';
import { bulkStartsSuite } from './bulk-starts.js';
import { callbacksSuite } from './callbacks.js';
import { checksSuite } from './checks.js';
import { claimsSuite } from './claims.js';
import { deadlinesSuite } from './deadlines.js';
import type { HarnessFactory } from './harness.js';
import { historySuite } from './history.js';
import { idempotencySuite } from './idempotency.js';
import { leasesSuite } from './leases.js';
import { operatorSuite } from './operator.js';
import { retentionSuite } from './retention.js';
import { retriesSuite } from './retries.js';
import { rollbackSuite } from './rollback.js';
import { schedulesSuite } from './schedules.js';
import { shutdownSuite } from './shutdown.js';
import { statsSuite } from './stats.js';
import { taskRunSuite } from './task-run.js';
import { transitionsSuite } from './transitions.js';
import { triggersSuite } from './triggers.js';

export { memoryStore } from '../store/memory-store.js';
export {
  type ConformanceHarness,
  type HarnessFactory,
  type ManualClock,
  manualClock,
  openQueue,
  sleep,
  type TestQueueOptions,
  waitFor,
  waitForStatus,
} from './harness.js';
export { checkSlotRuns, expectOneRunPerSecond, type ScheduleTrial, type SlotRunsReport } from './schedule-check.js';
export { expectSchemaMatchesCodec, type SchemaColumns, schemaCodecSuite } from './schema-codec.js';

/** Options of `runStoreConformance`. */
export interface ConformanceOptions {
  /** Areas to leave out, only for a store that documents why it cannot offer them. */
  skipAreas?: ConformanceArea[];
}

/** The areas the conformance suite covers, one file each. */
export type ConformanceArea =
  | 'idempotency'
  | 'claims'
  | 'transitions'
  | 'batching'
  | 'leases'
  | 'rollback'
  | 'history'
  | 'budgets'
  | 'shutdown'
  | 'triggers'
  | 'checks'
  | 'deadlines'
  | 'taskRun'
  | 'callbacks'
  | 'operator'
  | 'retention'
  | 'retries'
  | 'bulkStarts'
  | 'schedules'
  | 'stats';

const AREAS: Record<ConformanceArea, <Tx>(factory: HarnessFactory<Tx>) => void> = {
  idempotency: idempotencySuite,
  claims: claimsSuite,
  transitions: transitionsSuite,
  batching: batchingSuite,
  leases: leasesSuite,
  rollback: rollbackSuite,
  history: historySuite,
  budgets: budgetsSuite,
  shutdown: shutdownSuite,
  triggers: triggersSuite,
  checks: checksSuite,
  deadlines: deadlinesSuite,
  taskRun: taskRunSuite,
  callbacks: callbacksSuite,
  operator: operatorSuite,
  retention: retentionSuite,
  retries: retriesSuite,
  bulkStarts: bulkStartsSuite,
  schedules: schedulesSuite,
  stats: statsSuite,
};

/** Declares the whole store conformance suite (vitest) for one store: every store must pass it in full. */
export function runStoreConformance<Tx>(
  name: string,
  factory: HarnessFactory<Tx>,
  options: ConformanceOptions = {},
): void {
  describe(`store conformance: ${name}`, () => {
    for (const [area, suite] of Object.entries(AREAS) as [ConformanceArea, (f: HarnessFactory<Tx>) => void][]) {
      if (options.skipAreas?.includes(area)) continue;
      suite(factory);
    }
  });
}
