import { randomBytes } from 'node:crypto';
import { DocketError } from './errors.js';

const RUN_ID = /^[0-9a-f]{32}$/;

/** A new run id: 32 lowercase hex characters from a cryptographic source. */
export function newRunId(): string {
  return randomBytes(16).toString('hex');
}

/** Throws `JSON_INVALID` unless `runId` is a well-formed run id. */
export function assertRunId(runId: unknown, operation: string): asserts runId is string {
  if (typeof runId !== 'string' || !RUN_ID.test(runId)) {
    throw new DocketError('JSON_INVALID', 'runId must be 32 lowercase hex characters', {
      operation,
      details: { runId: typeof runId === 'string' ? runId.slice(0, 64) : typeof runId },
    });
  }
}
