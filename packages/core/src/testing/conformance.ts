// `@docket/core/conformance`: the store conformance suite, for authors of stores. It declares vitest tests, so vitest
// is this entry's peer; an application's tests want `@docket/core/testing`, which needs no test runner.
import { describe, expect, it } from 'vitest';
import type { StoreVerbName } from '../store/bind-verbs.js';
import { DocketError } from '../util/errors.js';
import { batchingSuite } from './batching.js';
import { budgetsSuite } from './budgets.js';
import { bulkStartsSuite } from './bulk-starts.js';
import { callbacksSuite } from './callbacks.js';
import { changesSuite } from './changes.js';
import { checksSuite } from './checks.js';
import { childrenSuite } from './children.js';
import { claimsSuite } from './claims.js';
import { deadlinesSuite } from './deadlines.js';
import { flowSuite } from './flow.js';
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
import { recordingVerbs } from './verb-coverage.js';

export { workerClaim } from './claim-request.js';
export { type ConformanceHarness, type HarnessFactory, openQueue, type TestQueueOptions } from './harness.js';
export { checkSlotRuns, expectOneRunPerSecond, type ScheduleTrial, type SlotRunsReport } from './schedule-check.js';
export { expectSchemaMatchesCodec, type SchemaColumns, schemaCodecSuite } from './schema-codec.js';
export { recordingVerbs, uncoveredVerbs } from './verb-coverage.js';

/** Options of `runStoreConformance`. */
export interface ConformanceOptions {
  /** Areas to leave out, only for a store that documents why it cannot offer them. */
  skipAreas?: ConformanceArea[];
  /**
   * One part of the suite: the areas dealt to part `index` (1-based) of `of`, in turn. Files that declare parts 1 to
   * `of` together run the whole suite, and a test runner can run them at once.
   */
  part?: { index: number; of: number };
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
  | 'stats'
  | 'flow'
  | 'children'
  | 'changes';

/** One conformance area: its suite and the store verbs it covers (each one is called by the area's tests). */
export interface AreaSuite {
  /** Declares the area's tests for one store. */
  suite: <Tx>(factory: HarnessFactory<Tx>) => void;
  /** The store verbs the area covers. */
  verbs: readonly StoreVerbName[];
}

const AREAS: Record<ConformanceArea, AreaSuite> = {
  idempotency: { suite: idempotencySuite, verbs: ['registerDefinition', 'createRun', 'getRun'] },
  claims: { suite: claimsSuite, verbs: ['claimDue', 'nextDueAt', 'transact'] },
  transitions: { suite: transitionsSuite, verbs: ['transact', 'getRun', 'getHistory'] },
  batching: { suite: batchingSuite, verbs: ['transact', 'claimDue'] },
  leases: { suite: leasesSuite, verbs: ['recoverExpired', 'transact', 'runCommand'] },
  rollback: { suite: rollbackSuite, verbs: ['transact'] },
  history: { suite: historySuite, verbs: ['getHistory'] },
  budgets: { suite: budgetsSuite, verbs: ['transact'] },
  shutdown: { suite: shutdownSuite, verbs: ['claimDue', 'transact'] },
  triggers: { suite: triggersSuite, verbs: ['transact', 'getRun'] },
  checks: { suite: checksSuite, verbs: ['transact'] },
  deadlines: { suite: deadlinesSuite, verbs: ['claimDue', 'transact'] },
  taskRun: { suite: taskRunSuite, verbs: ['transact', 'runCommand'] },
  callbacks: {
    suite: callbacksSuite,
    verbs: ['claimCallbackEvents', 'transactCallbackEvent', 'listCallbackEvents', 'runCommand', 'callbackCounts'],
  },
  operator: { suite: operatorSuite, verbs: ['runCommand', 'listRuns', 'callbackCountsOf'] },
  retention: { suite: retentionSuite, verbs: ['collect'] },
  retries: { suite: retriesSuite, verbs: ['claimCallbackEvents', 'transactCallbackEvent', 'transact'] },
  bulkStarts: { suite: bulkStartsSuite, verbs: ['createRuns', 'listRuns', 'callbackCountsOf'] },
  schedules: {
    suite: schedulesSuite,
    verbs: ['transactSchedule', 'dueSchedules', 'listSchedules', 'getDefinition', 'listRuns'],
  },
  stats: { suite: statsSuite, verbs: ['runStats', 'settledPerMinute'] },
  flow: { suite: flowSuite, verbs: ['claimDue', 'registerDefinition', 'listTasks', 'runCommand', 'listRuns'] },
  children: { suite: childrenSuite, verbs: ['transact', 'claimDue', 'listChildren', 'listRuns', 'runCommand'] },
  changes: {
    suite: changesSuite,
    verbs: ['readChanges', 'changesHead', 'trimChanges', 'createRun', 'claimDue', 'transact'],
  },
};

/** The conformance areas and the store verbs each covers. */
export const CONFORMANCE_AREAS: Readonly<Record<ConformanceArea, AreaSuite>> = AREAS;

/**
 * The areas `runStoreConformance` declares with these options, in order: all of them but `skipAreas`, and of those
 * only the part asked for. Throws `CONFIG_INVALID` for a part that does not exist.
 */
export function conformanceAreasOf(options: ConformanceOptions = {}): ConformanceArea[] {
  const { part } = options;
  if (
    part &&
    !(Number.isInteger(part.of) && Number.isInteger(part.index) && part.index >= 1 && part.index <= part.of)
  ) {
    throw new DocketError('CONFIG_INVALID', 'part needs whole numbers with 1 <= index <= of', {
      operation: 'runStoreConformance',
      details: { path: 'part' },
    });
  }
  return (Object.keys(AREAS) as ConformanceArea[]).filter(
    (area, position) =>
      !options.skipAreas?.includes(area) && (part === undefined || position % part.of === part.index - 1),
  );
}

/**
 * Declares the whole store conformance suite (vitest) for one store: every store must pass it in full. After each
 * area, a test checks that the area called every store verb it says it covers.
 */
export function runStoreConformance<Tx>(
  name: string,
  factory: HarnessFactory<Tx>,
  options: ConformanceOptions = {},
): void {
  const areas = conformanceAreasOf(options);
  const { part } = options;
  const title = part ? `${name} (part ${part.index} of ${part.of})` : name;
  describe(`store conformance: ${title}`, () => {
    for (const area of areas) {
      const { suite, verbs } = AREAS[area];
      const called = new Set<StoreVerbName>();
      suite(recordingVerbs(factory, called));
      it(`${area}: calls every store verb it covers`, () => {
        expect(verbs.filter((verb) => !called.has(verb))).toEqual([]);
      });
    }
  });
}
