import type { HistoryEntry } from '../machine/run-types.js';
import { isThenable } from '../util/thenable.js';

/** A structured lifecycle event given to `telemetry.sink`: one per transition and one per callback delivery. */
export type TelemetryEvent =
  | {
      type: 'transition';
      namespace: string;
      runId: string;
      task: { name: string; version: string };
      revision: number;
      entry: HistoryEntry;
    }
  | {
      type: 'delivery';
      namespace: string;
      runId: string;
      eventId: string;
      kind: string;
      deliveryAttempt: number;
      outcome: 'delivered' | 'retrying' | 'dead_letter';
      error?: { code: string; message: string };
    };

/**
 * Calls the sink for an event and never lets a failing sink break the runtime: a throw or a rejected promise is
 * caught and reported as one JSON line on stderr (a telemetry sink is an observer: its failure must not change what
 * the runtime does, nor crash the process with an unhandled rejection).
 */
export function emitTelemetry(sink: ((event: TelemetryEvent) => unknown) | null, event: TelemetryEvent): void {
  if (sink === null) return;
  try {
    const result = sink(event);
    if (isThenable(result)) Promise.resolve(result).catch((error: unknown) => sinkFailed(event, error));
  } catch (error) {
    sinkFailed(event, error);
  }
}

function sinkFailed(event: TelemetryEvent, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    `${JSON.stringify({ level: 'warn', msg: 'telemetry sink failed', event: event.type, runId: event.runId, error: message })}\n`,
  );
}
