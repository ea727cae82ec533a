/**
 * `@docket/core/store`: what a store author needs. The `Store` contract, the checks every store makes before it
 * writes, the row codec the SQL stores share, core's pure decisions a store may apply itself (the plain claim), and
 * the reference memory store.
 */

export { isPlainClaimOf, type PlainClaim, planClaim, qualifiesForPlainClaim } from '../machine/claim-policy.js';
export {
  CLAIMABLE,
  CLAIMABLE_STATUSES,
  type ClaimRank,
  claimDueAt,
  claimRankOf,
  compareClaimOrder,
  isClaimableAt,
  isRecoverableAt,
} from '../machine/claimable.js';
export type { ResolvedDefinition } from '../machine/definition.js';
export { claimEvent, recordDelivery, releaseEvent, replayEvent } from '../machine/event-machine.js';
export {
  type AppliedWrite,
  type AsyncFamilyIo,
  type CountedParent,
  childKeyTaken,
  countChildren,
  type FamilyIo,
  type FamilyStep,
  familySteps,
  followFamily,
  followFamilySync,
  planParentMove,
  touchesFamily,
} from '../machine/family.js';
export {
  claimsByGroup,
  DEFAULT_GROUP,
  EMPTY_SCOPE,
  type FlowClaimPlan,
  type FlowRate,
  type FlowScopeState,
  type GroupTurn,
  mayClaimByGroup,
  needsFlow,
  type TaskFlow,
  type TaskFlowState,
} from '../machine/flow.js';
export { type NewRun, newRun, startedEntry } from '../machine/new-run.js';
export { retryDelayMs } from '../machine/retry-policy.js';
export { type RunInfoFields, toRunInfo } from '../machine/run-info.js';
export {
  type CallbackEventRecord,
  type ChildCounts,
  copyRun,
  type Lease,
  type ReceivedEvent,
  type RunParent,
  type RunRecord,
} from '../machine/run-types.js';
export type { FlowHold, NewChildRun } from '../machine/run-write.js';
export { type RunWrite, transitionWrite, writeOf } from '../machine/run-write.js';
export type { Misfire, ScheduleRecord } from '../machine/schedule-types.js';
export {
  type CancelReason,
  type Decision,
  holdsLease,
  type InputType,
  type Refusal,
  TRANSITION_TABLE,
  type TransitionInput,
  type TransitionRule,
  transition,
} from '../machine/state-machine.js';
export { KeyTable } from '../util/key-table.js';
export { isThenable } from '../util/thenable.js';
export { bindVerbs, STORE_VERB_NAMES, type StoreVerbName, type StoreVerbs } from './bind-verbs.js';
export { countCallbacks, countCallbacksByRun } from './callback-counts.js';
export {
  type ChangesAnswer,
  type ChangesRequest,
  prefixBefore,
  type StoredChange,
  type TrimChangesRequest,
} from './changes.js';
export { checkEventWrite, checkWrite } from './checks.js';
export { type DecidedCommand, decideCommand, replayedReceipt } from './commands.js';
export {
  type CallbackEventSelectRequest,
  type ChildRecord,
  type CollectRequest,
  type CollectResult,
  type CommandPlan,
  type CommandRequest,
  type CreateRunRequest,
  type CreateRunResult,
  type CreateRunsRequest,
  type CreateRunsResult,
  type DefinitionRecord,
  type DueSchedulesRequest,
  type EventPlan,
  type ListCallbackEventsRequest,
  type ListChildrenRequest,
  type ListedRun,
  type ListRunsRequest,
  type ListSchedulesRequest,
  type PlanResult,
  type RunStatsAnswer,
  type RunStatsRequest,
  type SchedulePlan,
  type ScheduleWrite,
  type SelectRequest,
  type SettledMinute,
  type SettledRequest,
  type Store,
  type StoreCapabilities,
  type StoredReceipt,
  type TaskKey,
  type TaskRecord,
  type TransactOptions,
  type TransactPlan,
  UNSETTLED_EVENT_STATUSES,
} from './contract.js';
export { definitionConflict } from './definitions.js';
export { EVENT_COLUMNS, type EventRow, eventParams, rowToEvent } from './event-row.js';
export {
  crowdedScope,
  crowdedTurns,
  type FlowReader,
  type FlowRecorder,
  flowCandidates,
  flowClaimsCollectedBefore,
  flowPlanOf,
  flowStateOf,
  heldTask,
  holdsLeaseAfter,
  mergeCandidates,
  recordFlowClaims,
  registeredTask,
  takesAsMuch,
  tasksByName,
  windowStart,
} from './flow.js';
export {
  FRESH_RUN_BOUND,
  FRESH_RUN_LITERALS,
  freshRunValues,
  isFreshRun,
} from './fresh-row.js';
export {
  firstInTurn,
  GROUP_LIST_FRESH_MS,
  GroupLists,
  groupsFoundEmpty,
  type ListedGroup,
} from './group-lists.js';
export { HISTORY_COLUMNS, type HistoryRow, historyParams, rowToHistory } from './history-row.js';
export { KnownRuns } from './known-runs.js';
export { listedColumns, listedRunOf } from './listed-row.js';
export {
  type MemoryStore,
  type MemoryStoreOptions,
  type MemoryStoreRaw,
  type MemoryTransaction,
  memoryStore,
} from './memory-store.js';
export { keyPrefixEnd } from './read-requests.js';
export { isExpiredRun, runIdCutoff } from './retention.js';
export {
  CHILD_COLUMNS,
  type ChildRow,
  claimRankOfRow,
  parseSharedJson,
  type RunRow,
  rowToChild,
  rowToRun,
  runChanges,
  runColumn,
  runParams,
} from './run-row.js';
export { RUN_COLUMNS, runRowOf } from './run-row-values.js';
export { rowToSchedule, SCHEDULE_COLUMNS, type ScheduleRow, scheduleParams } from './schedule-row.js';
export { planStarts, type StartsPlan, startConflicts } from './start-plan.js';
export { rowToTask, TASK_COLUMNS, type TaskRow, taskValues } from './task-row.js';
export { type LoadDefinition, TaskVersions, type VersionValues } from './task-versions.js';
