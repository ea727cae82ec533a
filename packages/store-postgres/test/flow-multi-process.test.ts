import { fileURLToPath } from 'node:url';
import { createQueue, type Queue } from '@docket/core';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error The flow trial is plain JavaScript, shared by both stores' tests.
import { defineFlowTasks, FLOW_PROTOCOL } from '../../../tooling/flow/app.mjs';
// @ts-expect-error The flow trial is plain JavaScript, shared by both stores' tests.
import { mostInWindow } from '../../../tooling/flow/figures.mjs';
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

  it("never holds more than flow.concurrency leases, keeps it full most of the time, and gets a killed worker's slots back", async () => {
    // 50 ms pages: the few milliseconds from a settle to the next claim's page stay a small share on a loaded machine.
    const report = await trial({ concurrency: 3 }, { runs: 300, kill: true, pageMs: 50 });
    expect(report.leases.max).toBe(3);
    expect(report.leases.atLeast(3)).toBeGreaterThan(0.5);
    expect(report.recovered).toBeGreaterThan(0);
  });

  it('holds each of 10 groups to one lease while several groups run at once', async () => {
    const report = await trial({ group: { concurrency: 1 } }, { runs: 300, groups: 10 });
    expect(report.groups.perGroup).toBe(1);
    expect(report.groups.groupsAtOnce).toBeGreaterThan(2);
  });

  it('claims at most rate.max in any window of rate.perMs', async () => {
    // How close to the rate the claims come is measured by `pnpm bench` (flow rows), never asserted as a time here.
    const report = await trial({ rate: { max: 10, perMs: 250 } }, { runs: 100 });
    expect(report.claimTimes).toHaveLength(100);
    expect(mostInWindow(report.claimTimes, 250)).toBe(10);
  });

  it("a task hold stops every process until its time; a paused task's 50 due runs wait for resume while another runs", async () => {
    const held = await trial({}, { runs: 20, holdFirstMs: 800 });
    // No claim from the hold until its time (the claims decided at a time the hold covers).
    const hold = held.hold as { at: number; until: number };
    const during = held.claimTimes.filter((t: number) => t > hold.at && t < hold.until);
    expect(during).toEqual([]);
    expect(held.attemptsFailed).toBe(0);
    await dropSchema();
    const paused = await trial({}, { runs: 50, other: 20, pause: true });
    expect(paused.pausedClaims).toBe(0);
  });
});
