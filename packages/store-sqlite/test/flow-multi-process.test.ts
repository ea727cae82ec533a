import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue, type Queue } from '@docket/core';
import { afterEach, describe } from 'vitest';
// @ts-expect-error The flow trial is plain JavaScript, shared by both stores' tests.
import { defineFlowTasks, FLOW_PROTOCOL } from '../../../tooling/flow/app.mjs';
// @ts-expect-error The flow trial is plain JavaScript, shared by both stores' tests.
import { flowTrialCases } from '../../../tooling/flow/cases.mjs';
// @ts-expect-error The flow trial is plain JavaScript, shared by both stores' tests.
import { spawnFlowWorker } from '../../../tooling/flow/spawn.mjs';
// @ts-expect-error The flow trial is plain JavaScript, shared by both stores' tests.
import { flowTrial } from '../../../tooling/flow/trial.mjs';
import { sqliteStore } from '../src/index.js';
import { tempDir } from './helpers.js';

const WORKER = fileURLToPath(new URL('./fixtures/flow-worker.mjs', import.meta.url));

describe('flow control across four worker processes on one SQLite file', () => {
  let tmp: ReturnType<typeof tempDir> | undefined;
  let producer: Queue | undefined;

  async function reset() {
    await producer?.close();
    producer = undefined;
    tmp?.remove();
    tmp = undefined;
  }

  afterEach(reset);

  async function trial(flow: object, options: Record<string, unknown>) {
    tmp = tempDir();
    const filename = join(tmp.dir, 'flow.sqlite');
    producer = createQueue({
      store: sqliteStore({ filename }),
      runtime: { mode: 'producer' },
      protocol: FLOW_PROTOCOL,
    });
    const tasks = defineFlowTasks(producer, { flow, handlers: false });
    await producer.ready();
    const spawnWorker = (id: string, log: string) =>
      spawnFlowWorker(id, WORKER, [filename, id, JSON.stringify(flow), log]);
    return flowTrial({ producer, tasks, spawnWorker, ...options });
  }

  flowTrialCases({ trial, reset });
});
