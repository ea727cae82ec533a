import { fileURLToPath } from 'node:url';
import { createQueue, type Queue } from '@docket/core';
import pg from 'pg';
import { afterEach, describe } from 'vitest';
// @ts-expect-error The flow trial is plain JavaScript, shared by both stores' tests.
import { defineFlowTasks, FLOW_PROTOCOL } from '../../../tooling/flow/app.mjs';
// @ts-expect-error The flow trial is plain JavaScript, shared by both stores' tests.
import { flowTrialCases } from '../../../tooling/flow/cases.mjs';
// @ts-expect-error The flow trial is plain JavaScript, shared by both stores' tests.
import { spawnFlowWorker } from '../../../tooling/flow/spawn.mjs';
// @ts-expect-error The flow trial is plain JavaScript, shared by both stores' tests.
import { flowTrial } from '../../../tooling/flow/trial.mjs';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema } from './helpers.js';

const WORKER = fileURLToPath(new URL('./fixtures/flow-worker.mjs', import.meta.url));

describe.runIf(DATABASE_URL)('flow control across four worker processes on one PostgreSQL schema', () => {
  const url = DATABASE_URL as string;
  let schema: string | undefined;
  let producer: Queue | undefined;

  async function dropSchema() {
    await producer?.close();
    producer = undefined;
    if (schema === undefined) return;
    const admin = new pg.Client(url);
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }

  afterEach(dropSchema);

  async function trial(flow: object, options: Record<string, unknown>) {
    schema = freshSchema();
    const store = postgresStore({ connectionString: url, schema });
    producer = createQueue({ store, runtime: { mode: 'producer' }, protocol: FLOW_PROTOCOL });
    const tasks = defineFlowTasks(producer, { flow, handlers: false });
    await producer.ready();
    const spawnWorker = (id: string, log: string) =>
      spawnFlowWorker(id, WORKER, [url, schema as string, id, JSON.stringify(flow), log]);
    return flowTrial({ producer, tasks, spawnWorker, ...options });
  }

  flowTrialCases({ trial, reset: dropSchema });
});
