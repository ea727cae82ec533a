import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/index.js';
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

describe('packages/core/README.md', () => {
  it('lists every error code with the sentence its definition gives', () => {
    const source = readFileSync(new URL('../src/util/errors.ts', import.meta.url), 'utf8');
    const rows = tableRows(readFileSync(new URL('../README.md', import.meta.url), 'utf8')).map((r) => r.join('|'));
    const documented = [...source.matchAll(/\/\*\* (.*?) \*\/\n {2}([A-Z_]+): \{ retryable: (true|false) \}/g)];
    expect(documented.map((m) => m[2]).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const [, sentence, code, retryable] of documented) {
      expect(rows).toContain([`\`${code}\``, retryable, sentence].join('|'));
    }
  });
});
