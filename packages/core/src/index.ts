/**
 * `@docket/core`: what an application uses to define tasks, start and observe runs, and operate a queue. Store
 * authors import the contract and its helpers from `@docket/core/store`; tests import the memory store and the
 * conformance suite from `@docket/core/conformance`.
 */

export type { FlowLimits, FlowRate, TaskFlow } from './machine/flow.js';
export type {
  Backoff,
  CallbackCounts,
  CallbackEventStatus,
  CallbackKind,
  CallbackPolicy,
  HistoryEntry,
  Reason,
  RetryPolicy,
  RunError,
  RunInfo,
  RunStatus,
  StoredTrigger,
} from './machine/run-types.js';
export { isTerminal, REASONS, RUN_STATUSES, TERMINAL_STATUSES } from './machine/run-types.js';
export type { Misfire, ScheduleInfo } from './machine/schedule-types.js';
export { type Logger, type LogLevel, stderrLogger } from './runtime/observe/logger.js';
export type {
  PageOutcome,
  PageSpan,
  PageSpanInfo,
  SettledInfo,
  StartSpan,
  StartSpanInfo,
  TelemetryEvent,
  TraceParent,
  Tracer,
} from './runtime/observe/telemetry.js';
export type { Change, ChangesOptions, ChangesPage } from './runtime/operator/changes.js';
export type {
  DeadLetter,
  Health,
  Operator,
  OperatorResult,
  ReplayResult,
  RunCommand,
  RunListItem,
} from './runtime/operator/operator.js';
export type { ScheduleRunNowCommand, ScheduleRunNowResult } from './runtime/operator/schedule-run-now.js';
export type { OperatorSchedules, ScheduleCommand, ScheduleCommandResult } from './runtime/operator/schedules.js';
export type { SettledPerMinute } from './runtime/operator/settled.js';
export type { Stats, StatusCounts } from './runtime/operator/stats.js';
export type {
  OperatorTasks,
  TaskCommand,
  TaskCommandResult,
  TaskInfo,
} from './runtime/operator/tasks.js';
export type { ChildOutcome } from './runtime/page/children.js';
export type { FinishReason, ModelMessage, ModelProvider, ModelRequest, ModelResponse } from './runtime/page/model.js';
export {
  type CloseResult,
  type CreateQueueOptions,
  createQueue,
  type Queue,
  type QueueState,
  type TransactionOf,
} from './runtime/queue/create-queue.js';
export type { Clock, QueueOptions } from './runtime/queue/options.js';
export type { WatchedChange, WatchOptions } from './runtime/queue/watch.js';
export type { BatchTask, CancelResult, RunOptions, StartInput, WaitOptions } from './runtime/task/batch-task.js';
export type { TaskDefinition } from './runtime/task/definition.js';
export type { DeliverResult } from './runtime/task/deliver-trigger.js';
export type {
  CallbackContext,
  CheckContext,
  CheckResult,
  ChildStart,
  ControlOptions,
  Effect,
  ExecuteContext,
  PageControl,
  TaskHandlers,
  TriggerEvent,
  ValidateEventContext,
} from './runtime/task/handlers.js';
export type { ScheduleOptions, ScheduleResult } from './runtime/task/schedules.js';
export type { StartOptions } from './runtime/task/start-runs.js';
export type { Store, StoreCapabilities, StoreLog } from './store/contract.js';
export { DocketError, type DocketErrorCode, type DocketErrorInit, ERROR_CODES, isDocketError } from './util/errors.js';
export type { Json } from './util/json.js';
export { NonRetryableError, RetryAfterError } from './util/retry-errors.js';
