import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const program = readFileSync(new URL('./fixtures/quick-start.ts', import.meta.url), 'utf8');

describe('the README quick start', () => {
  it('is the program in test/fixtures/quick-start.ts, which type-checks with the package', () => {
    const start = readme.indexOf('## Quick start');
    const block = readme.slice(
      readme.indexOf('```ts\n', start) + 6,
      readme.indexOf('```\n', readme.indexOf('```ts\n', start) + 6),
    );
    expect(block).toBe(program);
  });

  it('runs to success and waits for the run to finish', async () => {
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => {
      printed.push(values.join(' '));
    });
    await import('./fixtures/quick-start.js');
    vi.restoreAllMocks();
    expect(printed).toEqual(['success 3', 'STARTED CLAIMED PAGE_COMMITTED CLAIMED PAGE_COMMITTED CLAIMED COMPLETED']);
  });
});
