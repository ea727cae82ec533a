import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TRANSITION_TABLE } from '../src/index.js';

describe('docs/state-machine.md', () => {
  it('lists every row of TRANSITION_TABLE', () => {
    const doc = readFileSync(new URL('../../../docs/state-machine.md', import.meta.url), 'utf8');
    for (const rule of TRANSITION_TABLE) {
      const from = rule.from.map((f) => (f === null ? '(new)' : `\`${f}\``)).join(', ');
      const reasons = rule.reasons.map((r) => `\`${r}\``).join(', ');
      expect(doc).toContain(`| \`${rule.input}\` | ${from} | \`${rule.to}\` | ${reasons} | ${rule.when} |`);
    }
  });
});
