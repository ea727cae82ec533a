import { describe, expect, it } from 'vitest';
// @ts-expect-error The trial is plain JavaScript, shared with `pnpm chaos`.
import { chaosTrial } from './fixtures/chaos.mjs';

describe('chaos: SQLite worker processes killed with SIGKILL while they run multi-page runs', () => {
  it('loses no run, commits no page twice, writes no business row twice, and leaves every run terminal', async () => {
    const figures = await chaosTrial({ runs: 1000, pages: 3, workers: 4, kills: 30 });
    process.stdout.write(`chaos figures: ${JSON.stringify(figures)}\n`);
    expect(figures.kills).toBe(30);
    expect(figures).toMatchObject({
      runsLost: 0,
      runsNotTerminal: 0,
      runsFailed: 0,
      pagesCommittedTwice: 0,
      duplicateBusinessRows: 0,
      missingBusinessRows: 0,
      integrity: 'ok',
    });
  }, 240_000);
});
