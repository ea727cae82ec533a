import type { RunRow, SelectRequest } from '@docket/core';
import { columnsOf } from './recordsets.js';
import { docketRuns } from './schema.js';

/** PostgreSQL's limit on a NOTIFY payload is 8000 bytes; a hint longer than this stays the namespace. */
const MAX_PAYLOAD = 7_000;
/** How long a hinted row is worth trying: past this the ordinary claim finds the run anyway. */
const MAX_AGE_MS = 2_000;
/** Most hinted rows kept; a process that does not claim them (a producer, a busy worker) drops the oldest. */
const MAX_ROWS = 512;

/** The prefix of a payload that carries rows (any other payload is a namespace). */
const ROWS = 'h1:';

/**
 * The columns a hint never carries: what the application put in a run (its query, state, error, idempotency key, and
 * the hash of its input). Any role that can connect to the database can LISTEN to a channel, so these stay in the
 * table; the claim of a hinted run reads them back from the row it writes (`RETURNING`).
 */
export const WITHHELD = ['query', 'state', 'error', 'idempotency_key', 'input_hash', 'trigger_event'] as const;

/** A run row as a hint carries it: Docket's bookkeeping columns, none of the `WITHHELD` ones. */
export type HintedRow = Omit<RunRow, (typeof WITHHELD)[number]>;

/**
 * The columns a hint carries (every run column but the `WITHHELD` ones), in table order. A hinted claim lands only
 * where each of them still holds, in the row, what the hint said.
 */
export const HINTED: readonly (keyof HintedRow)[] = columnsOf(docketRuns)
  .map((column) => column.name as keyof RunRow)
  .filter((column): column is keyof HintedRow => !(WITHHELD as readonly string[]).includes(column));

/**
 * The payload of the NOTIFY that follows a start: the new rows' bookkeeping columns when they fit, so that a worker
 * can claim them in one round trip (a guarded write, no locking select first); otherwise the namespace, as every
 * other notification carries. Nothing in it needs a secret: it holds no application data, and the claim trusts none
 * of it without the server comparing it with the row (see `claimHinted` in postgres-store.ts).
 */
export function startPayload(namespace: string, rows: readonly RunRow[]): string {
  const hinted = rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const column of HINTED) out[column] = row[column];
    return out;
  });
  const payload = ROWS + JSON.stringify({ namespace, rows: hinted });
  return payload.length <= MAX_PAYLOAD ? payload : namespace;
}

/**
 * Rows of runs just started, as their start's notification carried them. A claim tries them first: core decides on
 * the row as it was inserted, and the write lands only if every hinted column still holds what the hint said and no
 * other worker holds the row's lock. A hint is only ever a shortcut: the ordinary claim finds every run without it.
 */
export class ClaimHints {
  private readonly rows = new Map<string, { row: HintedRow; at: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** Keeps the rows a notification payload carries; a bare namespace, or anything malformed, adds nothing. */
  note(payload: string): void {
    if (!payload.startsWith(ROWS)) return;
    let parsed: { rows?: unknown };
    try {
      parsed = JSON.parse(payload.slice(ROWS.length)) as { rows?: unknown };
    } catch {
      return;
    }
    if (!Array.isArray(parsed.rows)) return;
    const at = this.clock();
    for (const given of parsed.rows as Record<string, unknown>[]) {
      if (typeof given !== 'object' || given === null || typeof given.run_id !== 'string') continue;
      // Only the hinted columns, every one of them: the claim compares exactly these with the row.
      if (!HINTED.every((column) => column in given)) continue;
      const row: Record<string, unknown> = {};
      for (const column of HINTED) row[column] = given[column];
      this.rows.set(given.run_id, { row: row as unknown as HintedRow, at });
    }
    // Map order is insertion order: the first keys are the oldest.
    for (const key of this.rows.keys()) {
      if (this.rows.size <= MAX_ROWS) break;
      this.rows.delete(key);
    }
  }

  /** Takes (and forgets) the hinted rows `request` could claim, oldest first, at most its limit; drops stale ones. */
  take(request: SelectRequest): HintedRow[] {
    const taken: HintedRow[] = [];
    if (this.rows.size === 0) return taken;
    const now = this.clock();
    for (const [runId, { row, at }] of this.rows) {
      if (now - at > MAX_AGE_MS) {
        this.rows.delete(runId);
        continue;
      }
      if (taken.length >= request.limit) break;
      const due = row.claim_due_at;
      if (row.namespace !== request.namespace || typeof due !== 'number' || due > request.now) continue;
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
