import { DocketError } from '@docket/core';

/** Wraps a driver error from Docket's own statements as `STORAGE_FAILURE` (busy, full, read-only, I/O), cause kept. */
export function storageFailure(error: unknown, operation: string, runId?: string): DocketError {
  if (error instanceof DocketError) return error;
  const code = (error as { code?: string } | null)?.code ?? 'UNKNOWN';
  // drizzle's "Failed query: ... params: ..." lists the statement's parameters: application data, never shown.
  const message = (error instanceof Error ? error.message : String(error)).replace(/\nparams: [\s\S]*$/, '');
  return new DocketError('STORAGE_FAILURE', `SQLite ${code}: ${message}`, {
    operation,
    cause: error,
    ...(runId === undefined ? {} : { runId }),
    details: { sqliteCode: code },
    retryable: code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code.startsWith('SQLITE_FULL'),
  });
}
