export { isPlainClaimOf, planClaim, qualifiesForPlainClaim } from './machine/claim-policy.js';
export { claimEvent, replayEvent, settleEvent } from './machine/event-machine.js';
export { retryDelayMs } from './machine/retry-policy.js';
export {
  type Backoff,
  type CallbackCounts,
  type CallbackEventRecord,
  type CallbackEventStatus,
  type CallbackKind,
  type CallbackPolicy,
  copyRun,
  type HistoryEntry,
  isTerminal,
  type Lease,
  REASONS,
  type Reason,
  type RetryPolicy,
  RUN_STATUSES,
  type RunError,
  type RunInfo,
  type RunRecord,
  type RunStatus,
  type StoredTrigger,
  TERMINAL_STATUSES,
  toRunInfo,
} from './machine/run-types.js';
export {
  type CancelReason,
  type Decision,
  type Refusal,
  TRANSITION_TABLE,
  type TransitionInput,
  type TransitionRule,
  transition,
} from './machine/state-machine.js';
export type { Clock, QueueOptions } from './runtime/config.js';
export type { ResolvedDefinition, TaskDefinition } from './runtime/definition.js';
export type {
  CallbackContext,
  CheckContext,
  CheckResult,
  ControlOptions,
  Effect,
  ExecuteContext,
  PageControl,
  TaskHandlers,
  TriggerEvent,
  ValidateEventContext,
} from './runtime/handlers.js';
export type { FinishReason, ModelMessage, ModelProvider, ModelRequest, ModelResponse } from './runtime/model.js';
export type { DeadLetter, Health, Operator, OperatorResult, ReplayResult, RunCommand } from './runtime/operator.js';
export {
  type CloseResult,
  type CreateQueueOptions,
  createQueue,
  type Queue,
  type QueueState,
} from './runtime/queue.js';
export type { BatchTask, CancelResult, RunOptions, StartInput } from './runtime/task.js';
export type { TelemetryEvent } from './runtime/telemetry.js';
export type { DeliverResult } from './runtime/triggers.js';
export { checkEventWrite, checkWrite } from './store/checks.js';
export {
  CLAIMABLE_STATUSES,
  type CollectRequest,
  type CollectResult,
  type CommandPlan,
  type CommandRequest,
  type CreateRunRequest,
  type CreateRunResult,
  type DefinitionRecord,
  type EventPlan,
  type EventSelectRequest,
  type ListEventsRequest,
  type ListRunsRequest,
  type PlainClaim,
  type PlanResult,
  type RunWrite,
  type SelectRequest,
  type Store,
  type StoreCapabilities,
  type TaskKey,
  type TransactOptions,
  type TransactPlan,
  UNSETTLED_EVENT_STATUSES,
} from './store/contract.js';
export {
  type MemoryStore,
  type MemoryStoreOptions,
  type MemoryTransaction,
  memoryStore,
} from './store/memory-store.js';
export {
  claimDueAt,
  EVENT_COLUMNS,
  type EventRow,
  eventParams,
  type HistoryRow,
  historyParams,
  parseSharedJson,
  RUN_COLUMNS,
  type RunRow,
  rowToEvent,
  rowToHistory,
  rowToRun,
  runChanges,
  runColumn,
  runParams,
} from './store/row-codec.js';
export { DocketError, type DocketErrorCode, type DocketErrorInit, ERROR_CODES, isDocketError } from './util/errors.js';
export { canonicalJson, type Json } from './util/json.js';
export { KeyTable } from './util/key-table.js';
export { isThenable } from './util/thenable.js';
