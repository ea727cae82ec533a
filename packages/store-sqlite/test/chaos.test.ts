import { describe, expect, it } from 'vitest';
// @ts-expect-error The trial is plain JavaScript, shared with `pnpm chaos`.
import { badFigures } from '../../../tooling/chaos/trial.mjs';
// @ts-expect-error The trial is plain JavaScript, shared with `pnpm chaos`.
import { sqliteChaosTrial } from './fixtures/chaos.mjs';

describe('chaos: SQLite worker processes and the producer killed with SIGKILL while runs, events, callbacks and a schedule run', () => {
  it('loses nothing, does nothing twice, consumes no attempt, delivers every callback, and every close returns', async () => {
    const figures = await sqliteChaosTrial({ runs: 1000, pages: 3, gates: 20, workers: 4, kills: 30 });
    process.stdout.write(`chaos figures: ${JSON.stringify(figures)}\n`);
    expect(figures.kills).toBe(30);
    expect(figures.producerKills).toBe(2);
    expect(badFigures(figures)).toEqual([]);
  }, 240_000);
});
