import { fileURLToPath } from 'node:url';
import { createQueue, type Queue } from '@docket/core';
import { describe } from 'vitest';
// @ts-expect-error The feed trial is plain JavaScript, shared by both stores' tests.
import { defineFeedTask, FEED_PROTOCOL } from '../../../tooling/feed/app.mjs';
// @ts-expect-error The feed trial is plain JavaScript, shared by both stores' tests.
import { feedTrialCases, spawnFeedProcess } from '../../../tooling/feed/cases.mjs';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, dropSchema, freshSchema } from './helpers.js';

const PROCESS = fileURLToPath(new URL('./fixtures/feed-process.mjs', import.meta.url));

describe.runIf(DATABASE_URL)('the changes feed while other processes write one PostgreSQL schema', () => {
  const url = DATABASE_URL as string;
  let schema = '';
  let producer: Queue | undefined;

  async function open() {
    schema = freshSchema();
    producer = createQueue({
      store: postgresStore({ connectionString: url, schema }),
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
    if (schema === '') return;
    await dropSchema(url, schema);
    schema = '';
  }

  const spawn = (id: string, role: string, ms: number) =>
    spawnFeedProcess(id, PROCESS, [url, schema, id, role, String(ms)]);
  feedTrialCases({ open, spawn, reset });
});
