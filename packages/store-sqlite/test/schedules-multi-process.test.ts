import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue } from '@docket/core';
import { expectOneRunPerSecond } from '@docket/core/conformance';
import { afterEach, describe, it } from 'vitest';
import { sqliteStore } from '../src/index.js';
import { tempDir } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/process.mjs', import.meta.url));

describe('a schedule fired by four processes on one SQLite file', () => {
  let tmp: ReturnType<typeof tempDir> | undefined;
  afterEach(() => tmp?.remove());

  it('makes exactly one run per one-second slot for 12 s: none early, none missing', async () => {
    tmp = tempDir();
    const filename = join(tmp.dir, 'ticks.sqlite');
    const queue = createQueue({ store: sqliteStore({ filename }), runtime: { mode: 'producer' } });
    const task = queue.define({ name: 'tick', version: '1' });
    await queue.ready();
    try {
      await expectOneRunPerSecond({
        queue,
        task,
        processes: 4,
        seconds: 12,
        spawnTicker: (i) =>
          spawn(process.execPath, [FIXTURE, 'ticker', filename, `t${i}`], { stdio: ['ignore', 'pipe', 'inherit'] }),
      });
    } finally {
      await queue.close();
    }
  }, 90_000);
});
