import type { Json } from '@docket/core';
import {
  type CollectRequest,
  type CollectResult,
  type CommandPlan,
  type CommandRequest,
  checkWrite,
  type RunRecord,
  type RunWrite,
  rowToEvent,
  rowToRun,
} from '@docket/core/store';
import { writeEvent } from './events.js';
import type { Statements } from './statements.js';

/** Runs an operator command once per command id, storing its result as the receipt in the same transaction. */
export function runCommand<T extends Json>(
  s: Statements,
  namespace: string,
  command: CommandRequest,
  plan: CommandPlan<T>,
  applyWrite: (current: RunRecord, write: RunWrite) => void,
): { result: T; replayed: boolean; requestHash: string } {
  const receipt = s.selectCommand.get(namespace, command.commandId);
  if (receipt) return { result: JSON.parse(receipt.result) as T, replayed: true, requestHash: receipt.request_hash };
  const runRow = command.runId === undefined ? undefined : s.selectRun.get(namespace, command.runId);
  const eventRow = command.eventId === undefined ? undefined : s.selectEvent.get(namespace, command.eventId);
  const run = runRow ? rowToRun(runRow) : null;
  const event = eventRow ? rowToEvent(eventRow) : null;
  const decided = plan({ run, event });
  if (decided.run !== null) {
    if (run === null) throw new Error('internal: command write for a missing run');
    checkWrite(run, decided.run);
    applyWrite(run, decided.run);
  }
  if (decided.event !== null) {
    if (event === null) throw new Error('internal: command write for a missing event');
    writeEvent(s, event, decided.event);
  }
  s.insertCommand.run(namespace, command.commandId, command.requestHash, JSON.stringify(decided.result), command.now);
  return { result: decided.result, replayed: false, requestHash: command.requestHash };
}

/**
 * Deletes what retention allows (see `Store.collect`). Candidates are scanned by run id, which starts with the
 * creation time: a run last changed before the cutoff was created before it, so the scan stops at the cutoff's id.
 */
export function collect(s: Statements, request: CollectRequest): CollectResult {
  const cutoff = Math.max(0, Math.floor(request.runsBefore)).toString(16).padStart(12, '0');
  const rows = s.selectCollectable.all(request.namespace, request.after ?? '', cutoff, request.limit);
  const counts = { runs: 0, events: 0, deadLetters: 0 };
  for (const row of rows) {
    const terminal = row.status === 'success' || row.status === 'failed' || row.status === 'cancelled';
    if (!terminal || row.updated_at >= request.runsBefore) continue;
    if ((s.countUnsettled.get(row.run_id)?.n ?? 0) > 0) continue;
    counts.events += s.deleteDeliveredOfRun.run(row.run_id).changes;
    s.deleteHistory.run(row.run_id);
    s.deleteRun.run(row.run_id);
    counts.runs++;
  }
  counts.events += s.deleteDelivered.run(request.namespace, request.runsBefore).changes;
  counts.deadLetters += s.deleteDeadLetters.run(request.namespace, request.deadLettersBefore).changes;
  s.deleteCommands.run(request.namespace, request.runsBefore);
  const next = rows.length === request.limit ? (rows.at(-1)?.run_id ?? null) : null;
  return { ...counts, next };
}
