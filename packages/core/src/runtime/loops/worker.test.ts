import { describe, expect, it } from 'vitest';
import { runIn } from '../../../test/run-fixture.js';
import { plannedWrites } from '../../machine/claim-policy.js';
import type { RunRecord } from '../../machine/run-types.js';
import type { RunWrite } from '../../store/contract.js';

const run = (runId: string): RunRecord => ({ ...runIn('running'), runId });
const write = (runId: string, revision: number): RunWrite => ({
  run: { ...run(runId), revision },
  history: [],
  events: [],
});

describe('plannedWrites', () => {
  it('reads each answered run at its index when the store answered every plan in order', () => {
    const planned = [write('a', 2), write('b', 2), write('c', 2)];
    const writeOf = plannedWrites(planned, [run('a'), run('b'), run('c')]);
    expect([0, 1, 2].map((i) => writeOf(['a', 'b', 'c'][i] as string, i))).toEqual(planned);
  });

  it('finds plans by run id when the answer is out of order or shorter, and a run planned twice gets its last plan', () => {
    const planned = [write('a', 2), write('b', 2), write('b', 3), write('c', 2)];
    const answered = [run('c'), run('b')];
    const writeOf = plannedWrites(planned, answered);
    expect(writeOf('c', 0)).toBe(planned[3]);
    expect(writeOf('b', 1)).toBe(planned[2]);
    expect(writeOf('x', 2)).toBeUndefined();
  });
});
