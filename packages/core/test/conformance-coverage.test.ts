import { describe, expect, it } from 'vitest';
import { isDocketError } from '../src/index.js';
import { STORE_VERB_NAMES } from '../src/store/index.js';
import { CONFORMANCE_AREAS, conformanceAreasOf, uncoveredVerbs } from '../src/testing/conformance.js';

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

  it('deals every area to exactly one of the parts, and the parts together are the whole suite', () => {
    const parts = [1, 2, 3].map((index) => conformanceAreasOf({ part: { index, of: 3 } }));
    expect(parts.map((areas) => areas.length)).toEqual([8, 8, 7]);
    expect(parts.flat().sort()).toEqual(Object.keys(CONFORMANCE_AREAS).sort());
    expect(conformanceAreasOf({ part: { index: 2, of: 3 }, skipAreas: ['claims'] })).toEqual(
      parts[1]?.filter((area) => area !== 'claims'),
    );
  });

  it.each([
    { index: 0, of: 3 },
    { index: 4, of: 3 },
    { index: 1.5, of: 3 },
    { index: 1, of: 0 },
  ])('refuses the part %j with CONFIG_INVALID', (part) => {
    let thrown: unknown;
    try {
      conformanceAreasOf({ part });
    } catch (error) {
      thrown = error;
    }
    expect(isDocketError(thrown) && thrown.code).toBe('CONFIG_INVALID');
  });
});
