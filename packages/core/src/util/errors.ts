/**
 * Every error code Docket raises, each with the one sentence that says when.
 * The object is the single definition: `DocketErrorCode` is derived from its keys.
 */
export const ERROR_CODES = {
  /** An option, definition or argument has an unknown key, a `null`, a wrong type or a value out of bounds. */
  CONFIG_INVALID: { retryable: false },
  /** The queue was used before `ready()` resolved. */
  QUEUE_NOT_READY: { retryable: true },
  /** `ready()` failed; the queue can no longer be used. */
  QUEUE_FAILED: { retryable: false },
  /** The queue is closing and takes no new work. */
  QUEUE_CLOSING: { retryable: false },
  /** The queue is closed. */
  QUEUE_CLOSED: { retryable: false },
  /** The operation is not allowed in this queue's `runtime.mode` (for example `start` on a consumer). */
  MODE_OPERATION_NOT_ALLOWED: { retryable: false },
  /** A value is not plain JSON (undefined, function, NaN, Date, BigInt, cycle, class instance), fails its schema, or an id is malformed. */
  JSON_INVALID: { retryable: false },
  /** A JSON value is larger than the configured byte, node or depth limit. */
  PAYLOAD_TOO_LARGE: { retryable: false },
  /** The idempotency key is already used by a run of this task with a different input. */
  IDEMPOTENCY_CONFLICT: { retryable: false },
  /** The run id belongs to another task definition than the one asked. */
  TASK_IDENTITY_MISMATCH: { retryable: false },
  /** The same task name and version is already registered with a different definition hash. */
  DEFINITION_HASH_CONFLICT: { retryable: false },
  /** The namespace already holds `limits.maxRuns` live runs. */
  CAPACITY_EXCEEDED: { retryable: true },
  /** A write may or may not have committed (a connection lost during commit): read before retrying. */
  OUTCOME_UNKNOWN: { retryable: true },
  /** An operator `commandId` was reused with a different request. */
  COMMAND_CONFLICT: { retryable: false },
  /** An operator command's `expectedRevision` is not the run's current revision. */
  REVISION_CONFLICT: { retryable: false },
  /** An event id was delivered again with different content. */
  EVENT_CONFLICT: { retryable: false },
  /** The worker no longer holds the run's lease (another claim, a cancel or a recovery happened). */
  LEASE_LOST: { retryable: false },
  /** A handler returned something other than this attempt's control object, called a control twice, or gave a synchronous store a promise. */
  HANDLER_CONTRACT_INVALID: { retryable: false },
  /** The database holds no Docket tables where they were expected, or was migrated by another version of Docket. */
  SCHEMA_MISMATCH: { retryable: false },
  /** The store failed to read or write; nothing was half-written. */
  STORAGE_FAILURE: { retryable: true },
  /** The store could not get a connection to its database. */
  CONNECTION_UNAVAILABLE: { retryable: true },
  /** Closing a resource (connection, timer, server) failed. */
  RESOURCE_CLEANUP_FAILED: { retryable: false },
  /** A list cursor is malformed or belongs to another query. */
  CURSOR_INVALID: { retryable: false },
  /** A changes-feed cursor points before the oldest entry retention has kept: entries after it may be gone. */
  CURSOR_EXPIRED: { retryable: false },
  /** A model provider answered with an HTTP error, or the connection was refused or reset (status 0). */
  PROVIDER_HTTP_ERROR: { retryable: false },
  /** A model provider did not answer within its `timeoutMs`. */
  PROVIDER_TIMEOUT: { retryable: true },
  /** The caller's signal aborted a model request. */
  PROVIDER_ABORTED: { retryable: false },
  /** A model provider's body is not the API's shape, or its content is not the JSON asked for. */
  PROVIDER_INVALID_RESPONSE: { retryable: false },
  /** A model provider's answer stopped for another reason than a normal stop (for example its length limit). */
  PROVIDER_TRUNCATED: { retryable: false },
  /** A provider configuration (docket.yaml, .env, environment) is invalid. */
  PROVIDER_CONFIG_INVALID: { retryable: false },
} as const satisfies Record<string, { retryable: boolean }>;

/** One of Docket's stable error codes. */
export type DocketErrorCode = keyof typeof ERROR_CODES;

/** The brand every `DocketError` carries: a registered symbol, the same in every copy of this package. */
const DOCKET_ERROR = Symbol.for('@docket/core/DocketError');

/** The optional context a `DocketError` carries. */
export interface DocketErrorInit {
  /** The public operation that failed, such as `task.start` or `store.transact`. */
  operation?: string;
  /** Overrides the code's default retryability. */
  retryable?: boolean;
  /** `false` only when a write may or may not have committed. */
  outcomeKnown?: boolean;
  runId?: string;
  eventId?: string;
  commandId?: string;
  idempotencyKey?: string;
  details?: Record<string, unknown>;
  cause?: unknown;
}

/** The one error class Docket throws: a stable `code` plus what is known about the failed operation. */
export class DocketError extends Error {
  /**
   * `instanceof DocketError` holds for errors made by any copy of `@docket/core` in the process (two versions
   * installed side by side): it reads the brand every DocketError carries, not the class that made it.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DOCKET_ERROR] === true;
  }

  override readonly name = 'DocketError';
  readonly code: DocketErrorCode;
  readonly operation: string;
  readonly retryable: boolean;
  readonly outcomeKnown: boolean;
  readonly runId?: string;
  readonly eventId?: string;
  readonly commandId?: string;
  readonly idempotencyKey?: string;
  readonly details?: Record<string, unknown>;

  constructor(code: DocketErrorCode, message: string, init: DocketErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = code;
    this.operation = init.operation ?? 'unknown';
    this.retryable = init.retryable ?? ERROR_CODES[code].retryable;
    this.outcomeKnown = init.outcomeKnown ?? code !== 'OUTCOME_UNKNOWN';
    if (init.runId !== undefined) this.runId = init.runId;
    if (init.eventId !== undefined) this.eventId = init.eventId;
    if (init.commandId !== undefined) this.commandId = init.commandId;
    if (init.idempotencyKey !== undefined) this.idempotencyKey = init.idempotencyKey;
    if (init.details !== undefined) this.details = init.details;
    Object.defineProperty(this, DOCKET_ERROR, { value: true });
  }
}

/** True when `value` is a `DocketError` made by any copy of `@docket/core`, optionally with the given code. */
export function isDocketError(value: unknown, code?: DocketErrorCode): value is DocketError {
  try {
    return value instanceof DocketError && (code === undefined || value.code === code);
  } catch {
    // A thrown Proxy whose traps throw is no DocketError.
    return false;
  }
}
