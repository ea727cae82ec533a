import { type CallbackEventRecord, checkEventWrite, eventParams } from '@docket/core/store';
import type { Statements } from '../statements.js';

/** Writes an event row if its stored revision is still `current`'s. */
export function writeEvent(s: Statements, current: CallbackEventRecord, next: CallbackEventRecord): void {
  checkEventWrite(current, next);
  const changed = s.updateEvent.run({ ...eventParams(next), expected_revision: current.revision }).changes;
  if (changed !== 1) throw new Error(`internal: event ${current.eventId} moved during its transaction`);
}
