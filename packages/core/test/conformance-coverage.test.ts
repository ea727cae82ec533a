import { describe, expect, it } from 'vitest';
import { STORE_VERB_NAMES } from '../src/store/index.js';
import { CONFORMANCE_AREAS, uncoveredVerbs } from '../src/testing/conformance.js';

describe('the conformance suite', () => {
  it('covers every store verb in some area', () => {
    expect(uncoveredVerbs(CONFORMANCE_AREAS)).toEqual([]);
  });

  it('would name a verb that no area covers', () => {
    const { stats: _left, ...others } = CONFORMANCE_AREAS;
    expect(uncoveredVerbs(others)).toEqual(['runStats', 'settledPerMinute']);
  });

  it('lists only real store verbs', () => {
    for (const area of Object.values(CONFORMANCE_AREAS)) {
      for (const verb of area.verbs) expect(STORE_VERB_NAMES).toContain(verb);
    }
  });
});
