import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue, type Queue } from '@docket/core';
import { describe } from 'vitest';
// @ts-expect-error The family trial is plain JavaScript, shared by both stores' tests.
import { defineFamilyTasks, FAMILY_PROTOCOL } from '../../../tooling/family/app.mjs';
// @ts-expect-error The family trial is plain JavaScript, shared by both stores' tests.
import { familyTrialCases, spawnFamilyWorker } from '../../../tooling/family/cases.mjs';
import { sqliteStore } from '../src/index.js';
import { tempDir } from './helpers.js';

const WORKER = fileURLToPath(new URL('./fixtures/family-worker.mjs', import.meta.url));

describe('child runs across worker processes on one SQLite file', () => {
  let tmp: ReturnType<typeof tempDir> | undefined;
  let producer: Queue | undefined;
  let filename = '';

  async function reset() {
    await producer?.close();
    producer = undefined;
    tmp?.remove();
    tmp = undefined;
  }

  async function open() {
    tmp = tempDir();
    filename = join(tmp.dir, 'family.sqlite');
    producer = createQueue({
      store: sqliteStore({ filename }),
      runtime: { mode: 'producer' },
      protocol: FAMILY_PROTOCOL,
    });
    const tasks = defineFamilyTasks(producer, { handlers: false });
    await producer.ready();
    return { producer, tasks };
  }

  const spawnWorker = (id: string, mode: string) => spawnFamilyWorker(id, WORKER, [filename, id, mode]);
  familyTrialCases({ open, spawnWorker, reset });
});
