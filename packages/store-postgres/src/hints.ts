import type { RunRow, SelectRequest } from '@docket/core';

/** PostgreSQL's limit on a NOTIFY payload is 8000 bytes; a payload that would pass this stays the bare namespace. */
const MAX_PAYLOAD = 7_000;
/** How long a hinted row is worth trying: past this the ordinary claim finds the run anyway. */
const MAX_AGE_MS = 2_000;
/** Most hinted rows kept; a process that does not claim them (a producer, a busy worker) drops the oldest. */
const MAX_ROWS = 512;

/**
 * The payload of the NOTIFY that follows a start: the new rows themselves when they fit, so that a worker can claim
 * them in one round trip (a guarded write, no locking select first); otherwise the namespace, as every other
 * notification carries.
 */
export function startPayload(namespace: string, rows: readonly RunRow[]): string {
  const payload = JSON.stringify({ namespace, rows });
  return Buffer.byteLength(payload) <= MAX_PAYLOAD ? payload : namespace;
}

/**
 * Rows of runs just started, as their start's notification carried them. A claim tries them first: core decides on
 * the row as it was inserted, and the write lands only if the row is still that row and no other worker holds its
 * lock (see `claimHinted`). A hint is only ever a shortcut: the ordinary claim finds every run without it.
 */
export class ClaimHints {
  private readonly rows = new Map<string, { row: RunRow; at: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** Keeps the rows a notification payload carries (a bare namespace carries none). */
  note(payload: string): void {
    if (!payload.startsWith('{')) return;
    let parsed: { rows?: unknown };
    try {
      parsed = JSON.parse(payload) as { rows?: unknown };
    } catch {
      return;
    }
    if (!Array.isArray(parsed.rows)) return;
    const at = this.clock();
    for (const row of parsed.rows as RunRow[]) {
      if (typeof row?.run_id !== 'string') continue;
      this.rows.set(row.run_id, { row, at });
    }
    // Map order is insertion order: the first keys are the oldest.
    for (const key of this.rows.keys()) {
      if (this.rows.size <= MAX_ROWS) break;
      this.rows.delete(key);
    }
  }

  /** Takes (and forgets) the hinted rows `request` could claim, oldest first, at most its limit; drops stale ones. */
  take(request: SelectRequest): RunRow[] {
    const taken: RunRow[] = [];
    if (this.rows.size === 0) return taken;
    const now = this.clock();
    for (const [runId, { row, at }] of this.rows) {
      if (now - at > MAX_AGE_MS) {
        this.rows.delete(runId);
        continue;
      }
      if (taken.length >= request.limit) break;
      const due = row.claim_due_at;
      if (row.namespace !== request.namespace || due === null || due > request.now) continue;
      if (!request.tasks.some((task) => task.name === row.task_name && task.version === row.task_version)) continue;
      this.rows.delete(runId);
      taken.push(row);
    }
    return taken;
  }

  /** How many rows are kept (for tests). */
  get size(): number {
    return this.rows.size;
  }
}
