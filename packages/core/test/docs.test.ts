import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TRANSITION_TABLE } from '../src/store/index.js';

/** The markdown table rows of a document as arrays of trimmed cells. */
function tableRows(doc: string): string[][] {
  return doc
    .split('\n')
    .filter((line) => line.startsWith('|'))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

describe('docs/state-machine.md', () => {
  it('lists every row of TRANSITION_TABLE', () => {
    const rows = tableRows(readFileSync(new URL('../../../docs/state-machine.md', import.meta.url), 'utf8')).map((r) =>
      r.join('|'),
    );
    for (const rule of TRANSITION_TABLE) {
      const from = rule.from.map((f) => (f === null ? '(new)' : `\`${f}\``)).join(', ');
      const reasons = rule.reasons.map((r) => `\`${r}\``).join(', ');
      expect(rows).toContain([`\`${rule.input}\``, from, `\`${rule.to}\``, reasons, rule.when].join('|'));
    }
  });
});
