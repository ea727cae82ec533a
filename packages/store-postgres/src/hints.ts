import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { RunRow, SelectRequest } from '@docket/core';

/** PostgreSQL's limit on a NOTIFY payload is 8000 bytes; a sealed payload longer than this stays the namespace. */
const MAX_PAYLOAD = 7_000;
/** How long a hinted row is worth trying: past this the ordinary claim finds the run anyway. */
const MAX_AGE_MS = 2_000;
/** Most hinted rows kept; a process that does not claim them (a producer, a busy worker) drops the oldest. */
const MAX_ROWS = 512;

/** The prefix of a sealed payload: the rows, encrypted and authenticated with the installation's key. */
const SEALED = 'k1:';

/**
 * Seals `text` with AES-256-GCM under `key`: `k1:` and base64 of nonce, tag and ciphertext. Any role that can
 * connect to the database can LISTEN to a channel or NOTIFY on it; sealed, the rows are readable, and a payload is
 * trusted, only where the key is, in the installation's `docket_settings` table beside the runs.
 */
export function seal(key: Buffer, channel: string, text: string): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(channel));
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return SEALED + Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64');
}

/** The text a payload sealed under `key` for `channel` carries, or `null` for anything else (forged, other key). */
export function unseal(key: Buffer, channel: string, payload: string): string | null {
  if (!payload.startsWith(SEALED)) return null;
  try {
    const bytes = Buffer.from(payload.slice(SEALED.length), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    decipher.setAAD(Buffer.from(channel));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/**
 * The payload of the NOTIFY that follows a start: the new rows themselves, sealed, when they fit, so that a worker
 * can claim them in one round trip (a guarded write, no locking select first); otherwise the namespace, as every
 * other notification carries.
 */
export function startPayload(key: Buffer, channel: string, namespace: string, rows: readonly RunRow[]): string {
  const payload = seal(key, channel, JSON.stringify({ namespace, rows }));
  return payload.length <= MAX_PAYLOAD ? payload : namespace;
}

/**
 * Rows of runs just started, as their start's notification carried them. A claim tries them first: core decides on
 * the row as it was inserted, and the write lands only if the row is still that row and no other worker holds its
 * lock (see `claimHinted`). A hint is only ever a shortcut: the ordinary claim finds every run without it.
 */
export class ClaimHints {
  private readonly rows = new Map<string, { row: RunRow; at: number }>();

  constructor(
    private readonly key: () => Buffer | null,
    private readonly channel: string,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Keeps the rows a notification payload carries, if it was sealed with this installation's key. */
  note(payload: string): void {
    const key = this.key();
    const text = key === null ? null : unseal(key, this.channel, payload);
    if (text === null) return;
    let parsed: { rows?: unknown };
    try {
      parsed = JSON.parse(text) as { rows?: unknown };
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
