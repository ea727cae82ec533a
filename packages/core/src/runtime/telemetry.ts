import type { HistoryEntry } from '../machine/run-types.js';

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

/** Calls the sink for an event and never lets a throwing sink break the runtime. */
export function emitTelemetry(sink: ((event: TelemetryEvent) => void) | null, event: TelemetryEvent): void {
  if (sink === null) return;
  try {
    sink(event);
  } catch {
    // A telemetry sink is an observer: its failure must not change what the runtime does.
  }
}
