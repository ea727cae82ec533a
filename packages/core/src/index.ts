export { claimEvent, replayEvent, settleEvent } from './callbacks.js';
export type { Clock, QueueOptions } from './config.js';
export type { ResolvedDefinition, TaskDefinition } from './definition.js';
export { isThenable } from './engine.js';
export { DocketError, type DocketErrorCode, type DocketErrorInit, ERROR_CODES, isDocketError } from './errors.js';
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
} from './handlers.js';
export { canonicalJson, type Json } from './json.js';
export { KeyTable } from './key-table.js';
export { type MemoryStore, type MemoryStoreOptions, type MemoryTransaction, memoryStore } from './memory-store.js';
export type { FinishReason, ModelMessage, ModelProvider, ModelRequest, ModelResponse } from './model.js';
export type { DeadLetter, Health, Operator, OperatorResult, ReplayResult, RunCommand } from './operator.js';
export { isPlainClaimOf, qualifiesForPlainClaim } from './plain-claim.js';
export { type CloseResult, type CreateQueueOptions, createQueue, type Queue, type QueueState } from './queue.js';
export { retryDelayMs } from './retry-policy.js';
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
} from './sql-rows.js';
export {
  type CancelReason,
  type Decision,
  type Refusal,
  TRANSITION_TABLE,
  type TransitionInput,
  type TransitionRule,
  transition,
} from './state-machine.js';
export {
  CLAIMABLE_STATUSES,
  type CollectRequest,
  type CollectResult,
  type CommandPlan,
  type CommandRequest,
  type CreateRunRequest,
  type CreateRunResult,
  checkEventWrite,
  checkWrite,
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
} from './store.js';
export type { BatchTask, CancelResult, RunOptions, StartInput } from './task.js';
export type { TelemetryEvent } from './telemetry.js';
export type { DeliverResult } from './triggers.js';
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
} from './types.js';
export { planClaim } from './worker.js';
