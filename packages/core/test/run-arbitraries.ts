import fc from 'fast-check';
import type { RunRecord } from '../src/machine/run-types.js';

/** A run's `parent`: none, or any id and page. */
export const parentArb: fc.Arbitrary<RunRecord['parent']> = fc.oneof(
  fc.constant(null),
  fc.record({ runId: fc.string(), page: fc.nat() }),
);

/** A run's `children` counts: none, or any counts under either `childFailure`. */
export const childrenArb: fc.Arbitrary<RunRecord['children']> = fc.oneof(
  fc.constant(null),
  fc.record({
    total: fc.nat(),
    settled: fc.nat(),
    page: fc.nat(),
    childFailure: fc.constantFrom('continue' as const, 'fail' as const),
  }),
);
