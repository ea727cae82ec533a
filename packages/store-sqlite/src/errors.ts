import { DocketError } from '@docket/core';

/** The SQLite result code an error carries, on itself or on a cause (drizzle wraps the driver's error), or `null`. */
export function sqliteCode(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * SQLite result codes that mean the store itself failed, whatever statement met them: the disk is full, an I/O error,
 * the file is read-only, corrupt or gone, memory ran out. An application's effect that meets one has not failed
 * on its own account: its page consumes no attempt.
 */
export function isStoreFault(code: string | null): boolean {
  if (code === null) return false;
  return /^SQLITE_(FULL|IOERR|READONLY|CORRUPT|NOTADB|CANTOPEN|NOMEM|BUSY|LOCKED)/.test(code);
}

/** Codes a later attempt may get past: a busy or locked database, a full disk once space is freed. */
const RETRYABLE = /^SQLITE_(BUSY|LOCKED|FULL)/;

/**
 * Wraps a driver error from Docket's own statements as `STORAGE_FAILURE` (busy, full, read-only, I/O), cause kept.
 * A full disk says so, whatever statement met it. The message never holds a statement's parameters.
 */
export function storageFailure(error: unknown, operation: string, runId?: string): DocketError {
  if (error instanceof DocketError) return error;
  const code = sqliteCode(error) ?? 'UNKNOWN';
  // drizzle's "Failed query: ... params: ..." lists the statement's parameters: application data, never shown.
  const message = (error instanceof Error ? error.message : String(error)).replace(/\nparams: [\s\S]*$/, '');
  const text = code.startsWith('SQLITE_FULL') ? 'the database or disk is full' : message;
  return new DocketError('STORAGE_FAILURE', `SQLite ${code}: ${text}`, {
    operation,
    cause: error,
    ...(runId === undefined ? {} : { runId }),
    details: { sqliteCode: code },
    retryable: RETRYABLE.test(code),
  });
}

/**
 * The error a write of a batch gets when SQLite rolled back the batch's whole transaction because of another write
 * (a full disk, an I/O error): its own `STORAGE_FAILURE`, naming the cause but not the other write's statement.
 */
export function batchAborted(error: unknown): DocketError {
  const code = sqliteCode(error) ?? 'UNKNOWN';
  const why = code.startsWith('SQLITE_FULL') ? 'the database or disk is full' : 'SQLite rolled back the transaction';
  return new DocketError('STORAGE_FAILURE', `SQLite ${code}: ${why}; nothing of this write was stored`, {
    operation: 'store.commit',
    cause: error,
    details: { sqliteCode: code },
    retryable: RETRYABLE.test(code) || code.startsWith('SQLITE_IOERR'),
  });
}
