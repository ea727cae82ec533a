import { describe, expect, it } from 'vitest';
// @ts-expect-error The trial is plain JavaScript, shared with `pnpm chaos`.
import { badFigures } from '../../../tooling/chaos/trial.mjs';
// @ts-expect-error The trial is plain JavaScript, shared with `pnpm chaos`.
import { postgresChaosTrial } from './fixtures/chaos.mjs';
import { DATABASE_URL } from './helpers.js';

// Killing backends needs the real server (.ci/run provides it).
describe.runIf(DATABASE_URL)('chaos: backends of the workers and the producer terminated every ~50 ms', () => {
  it('loses nothing, does nothing twice, consumes no attempt, wedges no worker, and every close returns', async () => {
    const figures = await postgresChaosTrial({
      url: DATABASE_URL,
      runs: 1000,
      pages: 3,
      gates: 20,
      workers: 2,
      kills: 120,
      killEveryMs: 50,
      timeoutMs: 60_000,
    });
    process.stdout.write(`postgres chaos figures: ${JSON.stringify(figures)}\n`);
    // The kills stop early only when every run has ended.
    expect(figures.kills).toBeGreaterThanOrEqual(50);
    expect(figures.producerKills).toBe(2);
    expect(badFigures(figures)).toEqual([]);
  }, 240_000);
});
