import { describe, expect, it } from 'vitest';
import { runIn } from '../../test/run-fixture.js';
import { newRun } from '../machine/new-run.js';
import { FRESH_RUN_BOUND, FRESH_RUN_LITERALS, freshRunValues, isFreshRun } from './fresh-row.js';
import { type RunRow, runParams } from './run-row.js';
import { RUN_COLUMNS } from './run-row-values.js';

/** A fresh start with every optional column set: a time trigger, a deadline, a key, a priority, a group, a trace. */
const fresh = () =>
  newRun({
    runId: 'b'.repeat(32),
    namespace: 'tenant',
    taskName: 'notice',
    taskVersion: '2',
    definitionHash: 'h'.repeat(64),
    query: { release: 7 },
    inputHash: 'i'.repeat(64),
    idempotencyKey: 'k-7',
    trigger: { at: new Date(9_000).toISOString() },
    dueAt: 9_000,
    deadlineAt: 60_000,
    modelCallLimit: 3,
    policy: { attempts: 2, timeoutMs: 500, backoff: { baseMs: 1, maxMs: 2, jitter: 'full' } },
    events: ['success'],
    recovery: 'manual',
    createdAt: 1_000,
    priority: 5,
    traceParent: '00-0123456789abcdef0123456789abcdef-0123456789abcdef-01',
    group: 'acme',
  });

/** A literal's value as `runParams` encodes it. */
const encoded = (literal: string) => (literal === 'NULL' ? null : Number(literal));

describe('the row of a fresh start', () => {
  it('splits the run columns into literals and bound columns, in table order', () => {
    const literal = Object.keys(FRESH_RUN_LITERALS);
    expect([...FRESH_RUN_BOUND, ...literal].sort()).toEqual([...RUN_COLUMNS].sort());
    expect(FRESH_RUN_BOUND).toEqual(RUN_COLUMNS.filter((column) => !literal.includes(column)));
  });

  it('binds what runParams encodes, and its literals are what runParams encodes for every other column', () => {
    const run = fresh();
    expect(isFreshRun(run)).toBe(true);
    const row = runParams(run);
    const version = { definition_hash: '', policy: row.policy, events: '', recovery: row.recovery };
    const expected = FRESH_RUN_BOUND.map((column) => (column in version ? version[column as 'policy'] : row[column]));
    expect(freshRunValues(run, version)).toEqual(expected);
    for (const [column, literal] of Object.entries(FRESH_RUN_LITERALS)) {
      expect(row[column as keyof RunRow], column).toBe(encoded(literal as string));
    }
  });

  it('is not fresh once a claim, a page, a retry or a family wrote it', () => {
    expect(isFreshRun(runIn('running'))).toBe(false);
    const run = fresh();
    for (const patch of [
      { revision: 2 },
      { page: 2 },
      { state: { cursor: 1 } },
      { retries: 1 },
      { rateLimited: 1 },
      { parent: { runId: 'p'.repeat(32), page: 1 } },
      { children: { total: 1, settled: 0, page: 1, childFailure: 'continue' } },
    ]) {
      expect(isFreshRun({ ...run, ...patch } as typeof run), JSON.stringify(patch)).toBe(false);
    }
  });
});
