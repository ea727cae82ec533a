/** The history row both SQL stores use, and its codec. */
import type { HistoryEntry } from '../machine/run-types.js';

/** A `docket_history` row. */
export interface HistoryRow {
  run_id: string;
  seq: number;
  at: string;
  from_status: string | null;
  to_status: string;
  reason: string;
  actor: string;
  detail: string | null;
}

/** Named parameters for one history row. */
export function historyParams(runId: string, entry: HistoryEntry): HistoryRow {
  return {
    run_id: runId,
    seq: entry.seq,
    at: entry.at,
    from_status: entry.from,
    to_status: entry.to,
    reason: entry.reason,
    actor: entry.actor,
    detail: entry.detail === undefined ? null : JSON.stringify(entry.detail),
  };
}

/** Rebuilds a `HistoryEntry` from its row. */
export function rowToHistory(row: HistoryRow): HistoryEntry {
  const entry: HistoryEntry = {
    seq: row.seq,
    at: row.at,
    from: row.from_status as HistoryEntry['from'],
    to: row.to_status as HistoryEntry['to'],
    reason: row.reason as HistoryEntry['reason'],
    actor: row.actor,
  };
  if (row.detail !== null) entry.detail = JSON.parse(row.detail);
  return entry;
}

/** The columns of a history row. */
export const HISTORY_COLUMNS = [
  'run_id',
  'seq',
  'at',
  'from_status',
  'to_status',
  'reason',
  'actor',
  'detail',
] as const;
