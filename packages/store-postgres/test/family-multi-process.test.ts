import { fileURLToPath } from 'node:url';
import { createQueue, type Queue } from '@docket/core';
import { describe } from 'vitest';
// @ts-expect-error The family trial is plain JavaScript, shared by both stores' tests.
import { defineFamilyTasks, FAMILY_PROTOCOL } from '../../../tooling/family/app.mjs';
// @ts-expect-error The family trial is plain JavaScript, shared by both stores' tests.
import { familyTrialCases, spawnFamilyWorker } from '../../../tooling/family/cases.mjs';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, dropSchema, freshSchema } from './helpers.js';

const WORKER = fileURLToPath(new URL('./fixtures/family-worker.mjs', import.meta.url));

describe.runIf(DATABASE_URL)('child runs across worker processes on one PostgreSQL schema', () => {
  const url = DATABASE_URL as string;
  let schema = '';
  let producer: Queue | undefined;

  async function reset() {
    await producer?.close();
    producer = undefined;
    if (schema === '') return;
    await dropSchema(url, schema);
    schema = '';
  }

  async function open() {
    schema = freshSchema();
    const store = postgresStore({ connectionString: url, schema });
    producer = createQueue({ store, runtime: { mode: 'producer' }, protocol: FAMILY_PROTOCOL });
    const tasks = defineFamilyTasks(producer, { handlers: false });
    await producer.ready();
    return { producer, tasks };
  }

  const spawnWorker = (id: string, mode: string) => spawnFamilyWorker(id, WORKER, [url, schema, id, mode]);
  familyTrialCases({ open, spawnWorker, reset });
});
