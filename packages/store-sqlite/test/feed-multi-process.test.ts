import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue, type Queue } from '@docket/core';
import { describe } from 'vitest';
// @ts-expect-error The feed trial is plain JavaScript, shared by both stores' tests.
import { defineFeedTask, FEED_PROTOCOL } from '../../../tooling/feed/app.mjs';
// @ts-expect-error The feed trial is plain JavaScript, shared by both stores' tests.
import { feedTrialCases, spawnFeedProcess } from '../../../tooling/feed/cases.mjs';
import { sqliteStore } from '../src/index.js';
import { tempDir } from './helpers.js';

const PROCESS = fileURLToPath(new URL('./fixtures/feed-process.mjs', import.meta.url));

describe('the changes feed while other processes write one SQLite file', () => {
  let tmp: ReturnType<typeof tempDir> | undefined;
  let producer: Queue | undefined;
  let filename = '';

  async function open() {
    tmp = tempDir();
    filename = join(tmp.dir, 'feed.sqlite');
    producer = createQueue({
      store: sqliteStore({ filename }),
      runtime: { mode: 'producer' },
      protocol: FEED_PROTOCOL,
    });
    const task = defineFeedTask(producer, { handlers: false });
    await producer.ready();
    return { producer, task };
  }

  async function reset() {
    await producer?.close();
    producer = undefined;
    tmp?.remove();
    tmp = undefined;
  }

  const spawn = (id: string, role: string, ms: number) =>
    spawnFeedProcess(id, PROCESS, [filename, id, role, String(ms)]);
  feedTrialCases({ open, spawn, reset });
});
