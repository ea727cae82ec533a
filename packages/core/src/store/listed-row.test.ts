import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { childrenArb, parentArb } from '../../test/run-arbitraries.js';
import { runIn } from '../../test/run-fixture.js';
import { toRunInfo, toRunInfoWithoutPayloads } from '../machine/run-info.js';
import { RUN_STATUSES, type RunRecord } from '../machine/run-types.js';
import { listedColumns, listedRunOf } from './listed-row.js';
import { runParams } from './run-row.js';

/** Any JSON value as it reads back from a JSON column (`-0` is stored as `0`). */
const stored = fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown);

/** A run with arbitrary values in the fields a listing shows. */
const listedRun = fc
  .record({
    status: fc.constantFrom(...RUN_STATUSES),
    query: stored,
    state: fc.oneof(fc.constant(null), stored),
    page: fc.nat(),
    pageFailures: fc.nat(),
    businessFailures: fc.nat(),
    scheduledRetries: fc.nat(),
    recoveries: fc.nat(),
    revision: fc.nat(),
    dueAt: fc.oneof(fc.constant(null), fc.nat()),
    deadlineAt: fc.oneof(fc.constant(null), fc.nat()),
    modelCallLimit: fc.oneof(fc.constant(null), fc.nat()),
    modelCallsUsed: fc.nat(),
    createdAt: fc.nat({ max: 4_000_000_000_000 }),
    updatedAt: fc.nat({ max: 4_000_000_000_000 }),
    priority: fc.integer({ min: -1000, max: 1000 }),
    group: fc.oneof(fc.constant(null), fc.string({ minLength: 1 })),
    rateLimited: fc.nat(),
    parent: parentArb,
    children: childrenArb,
  })
  .map(({ status, ...fields }) => ({ ...runIn(status), ...fields }) as RunRecord);

const callbacks = { pending: 0, delivered: 0, deadLetters: 0 };

describe('listedRunOf', () => {
  it('rebuilds from the listed columns the RunInfo the whole row gives, with payloads only when they were read', () => {
    fc.assert(
      fc.property(listedRun, fc.boolean(), (run, payloads) => {
        const row = runParams(run) as unknown as Record<string, unknown>;
        const listed = listedRunOf(listedColumns(payloads).map((column) => row[column]));
        const { query, state, ...shown } = toRunInfo(run, callbacks);
        expect(toRunInfoWithoutPayloads(listed, callbacks)).toEqual(shown);
        expect(listed.query).toEqual(payloads ? query : undefined);
        expect(listed.state).toEqual(payloads ? state : undefined);
      }),
      { numRuns: 300 },
    );
  });

  it('reads 25 columns of the run row, and query and state after them when payloads are asked for', () => {
    expect(listedColumns(false)).toHaveLength(25);
    expect(listedColumns(false)).not.toContain('policy');
    expect(listedColumns(true)).toEqual([...listedColumns(false), 'query', 'state']);
  });
});
