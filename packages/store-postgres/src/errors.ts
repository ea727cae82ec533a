import { DocketError } from '@docket/core';

/** Tracks whether a transaction had reached its COMMIT when an error arrived. */
export class OutcomeTracker {
  private atCommit = false;
  /** Called when the work is done and the driver is about to send COMMIT. */
  committing(): void {
    this.atCommit = true;
  }
  get reachedCommit(): boolean {
    return this.atCommit;
  }
}

/**
 * An error's message without the statement's parameters: drizzle's "Failed query: ... params: ..." lists them, and
 * they hold application data (queries, payloads, keys) that must not reach logs or `health()`.
 */
export function withoutParams(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = (error as { cause?: unknown })?.cause;
  const own = message.replace(/\nparams: [\s\S]*$/, '');
  return cause instanceof Error && !own.includes(cause.message) ? `${own}: ${cause.message}` : own;
}

/** SQLSTATEs of text the server cannot store (a NUL, a character its encoding lacks): the input's fault. */
const INVALID_TEXT = new Set(['22021', '22P05']);

/** SQLSTATE classes and codes that mean the connection, not the statement, failed. */
const CONNECTION_LOST = /^(08|57P0[1-3])/;

/** The SQLSTATE of a driver error (or of its cause), if it has one. */
export function sqlState(error: unknown): string | undefined {
  const direct = (error as { code?: unknown })?.code;
  if (typeof direct === 'string' && /^[0-9A-Z]{5}$/.test(direct)) return direct;
  const cause = (error as { cause?: { code?: unknown } })?.cause?.code;
  return typeof cause === 'string' && /^[0-9A-Z]{5}$/.test(cause) ? cause : undefined;
}

/**
 * True when the server refused a statement (an SQLSTATE that is not a lost connection): its transaction was rolled
 * back and nothing of it was written, so the calls batched into it can run again on their own.
 */
export function statementRefused(error: unknown): boolean {
  const state = sqlState(error);
  return state !== undefined && !CONNECTION_LOST.test(state);
}

/**
 * Whether an error means the connection, not the statement, failed: a connection SQLSTATE, or node-postgres's own
 * words for a dead client ("Connection terminated", "Client has encountered a connection error and is not
 * queryable", a pool that found no connection in time, a statement with no answer in time, a reset socket).
 */
export function connectionLost(error: unknown): boolean {
  const state = sqlState(error);
  if (state !== undefined) return CONNECTION_LOST.test(state);
  const text = `${(error as Error)?.message ?? ''} ${(error as { cause?: Error })?.cause?.message ?? ''}`;
  return /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Query read timeout|ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|socket|closed/i.test(
    text,
  );
}

/**
 * Maps an error of a store transaction. An error thrown by core's plan (a DocketError, or the application's effect
 * or check) passes through; a lost connection at COMMIT is `OUTCOME_UNKNOWN` (read before retrying); a lost
 * connection before it is `CONNECTION_UNAVAILABLE` (nothing was written); any other driver error `STORAGE_FAILURE`.
 */
export function classify(
  error: unknown,
  outcome: OutcomeTracker,
  operation: string,
  context: { runId?: string; idempotencyKey?: string },
): unknown {
  if (error instanceof DocketError) return error;
  const lost = connectionLost(error);
  if (lost && outcome.reachedCommit) {
    return new DocketError(
      'OUTCOME_UNKNOWN',
      'the connection was lost while committing: the write may or may not have happened; read before retrying',
      { operation, outcomeKnown: false, cause: error, ...context },
    );
  }
  if (!outcome.reachedCommit && sqlState(error) === undefined && !lost) return error; // the plan's own error
  const state = sqlState(error);
  if (state !== undefined && INVALID_TEXT.has(state)) {
    return new DocketError('CONFIG_INVALID', `PostgreSQL cannot store this text: ${withoutParams(error)}`, {
      operation,
      cause: error,
      details: { sqlState: state },
      ...context,
    });
  }
  if (lost) {
    return new DocketError('CONNECTION_UNAVAILABLE', `PostgreSQL connection lost: ${withoutParams(error)}`, {
      operation,
      cause: error,
      ...context,
    });
  }
  return new DocketError('STORAGE_FAILURE', `PostgreSQL ${sqlState(error) ?? ''}: ${withoutParams(error)}`.trim(), {
    operation,
    cause: error,
    details: { sqlState: sqlState(error) ?? null },
    ...context,
  });
}
