import { describe, expect, it } from 'vitest';
import { newRun, startedEntry } from '../machine/new-run.js';
import { transition } from '../machine/state-machine.js';
import { EVENT_COLUMNS, eventParams } from '../store/event-row.js';
import { HISTORY_COLUMNS, historyParams } from '../store/history-row.js';
import { runParams } from '../store/run-row.js';
import { RUN_COLUMNS } from '../store/run-row-values.js';

/** The SQL column names of a store's three Docket tables, as its schema (drizzle) declares them. */
export interface SchemaColumns {
  runs: readonly string[];
  history: readonly string[];
  events: readonly string[];
}

/**
 * Asserts that a store's schema and the row codec name the same columns: every column of each table is one the codec
 * writes and reads, and every field the codec encodes has its column. Adding a field in one place and not the other
 * fails here, not in production.
 */
export function expectSchemaMatchesCodec(schema: SchemaColumns): void {
  const sorted = (names: Iterable<string>) => [...names].sort();
  const run = newRun({
    runId: '0'.repeat(32),
    namespace: 'default',
    taskName: 't',
    taskVersion: '1',
    definitionHash: 'h',
    query: { n: 1 },
    inputHash: '',
    idempotencyKey: null,
    trigger: null,
    dueAt: 0,
    deadlineAt: null,
    modelCallLimit: null,
    policy: { attempts: 1, timeoutMs: 1000, backoff: { baseMs: 1, maxMs: 1, jitter: 'full' } },
    events: ['success'],
    recovery: 'automatic',
    createdAt: 0,
  });
  const claimed = transition(run, { type: 'claim', actor: 'w', leaseMs: 1000 }, 1);
  if (!claimed.ok) throw new Error('internal: the sample run could not be claimed');
  const ended = transition(claimed.run, { type: 'page_end', actor: 'w', leaseToken: claimed.run.fence }, 2);
  const event = ended.ok ? ended.events[0] : undefined;
  if (event === undefined) throw new Error('internal: the sample run emitted no callback event');

  expect(sorted(schema.runs), 'docket_runs columns vs RUN_COLUMNS').toEqual(sorted(RUN_COLUMNS));
  expect(sorted(Object.keys(runParams(run))), 'runParams keys vs RUN_COLUMNS').toEqual(sorted(RUN_COLUMNS));
  expect(sorted(schema.history), 'docket_history columns vs HISTORY_COLUMNS').toEqual(sorted(HISTORY_COLUMNS));
  expect(sorted(Object.keys(historyParams(run.runId, startedEntry(run))))).toEqual(sorted(HISTORY_COLUMNS));
  expect(sorted(schema.events), 'docket_events columns vs EVENT_COLUMNS').toEqual(sorted(EVENT_COLUMNS));
  expect(sorted(Object.keys(eventParams(event))), 'eventParams keys vs EVENT_COLUMNS').toEqual(sorted(EVENT_COLUMNS));
}

/** Declares the test that ties a store's schema to the row codec (`expectSchemaMatchesCodec`). */
export function schemaCodecSuite(schema: SchemaColumns): void {
  describe('schema and row codec', () => {
    it('declare the same columns for runs, history and callback events', () => expectSchemaMatchesCodec(schema));
  });
}
