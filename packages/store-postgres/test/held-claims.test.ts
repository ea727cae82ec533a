import { createQueue } from '@docket/core';
import {
  type PlainClaim,
  type PlanResult,
  planClaim,
  type RunRecord,
  type SelectRequest,
  transition,
} from '@docket/core/store';
import { waitFor } from '@docket/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { UNFLUSHED_COMMIT } from '../src/wire/session.js';
import { DATABASE_URL, freshSchema, loggingPool, serverProducer, slowCommits, terminateSlowCommit } from './helpers.js';

const TASK = { name: 'held', version: '1' };
const ACTOR = 'worker:held';
const LEASE_MS = 30_000;

/** A claim request for TASK as the worker loop makes it. */
function claimRequest(now = Date.now()): SelectRequest {
  const plainClaim: PlainClaim = { actor: ACTOR, leaseExpiresAt: now + LEASE_MS, at: new Date(now).toISOString() };
  return {
    namespace: 'default',
    tasks: [TASK],
    limit: 10,
    now,
    plainClaim,
    plan: (run) => planClaim(run, ACTOR, LEASE_MS, now),
  };
}

/** The pure plan of a page that ended: core's `page_end` on the run as the plan sees it. */
function endPlan(token: number) {
  return (_tx: unknown, current: RunRecord | null): PlanResult<string> => {
    if (current === null) return { write: null, value: 'missing' };
    const decision = transition(current, { type: 'page_end', actor: ACTOR, leaseToken: token }, Date.now());
    if (!decision.ok) return { write: null, value: 'refused' };
    return { write: { run: decision.run, history: [decision.history], events: decision.events }, value: 'ended' };
  };
}

describe.skipIf(!DATABASE_URL)('held claims (a real server)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setup() {
    const schema = freshSchema();
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 3 });
    const { queue: producer, task } = await serverProducer(schema, TASK);
    cleanups.push(async () => {
      await producer.close();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });
    const status = async (runId: string) =>
      (await admin.query(`SELECT status FROM "${schema}".docket_runs WHERE run_id = $1`, [runId])).rows[0]?.status;
    const reasons = async (runId: string) =>
      (
        await admin.query(`SELECT seq, reason FROM "${schema}".docket_history WHERE run_id = $1 ORDER BY seq`, [runId])
      ).rows.map((r) => `${r.seq} ${r.reason}`);
    return { schema, admin, task, status, reasons };
  }

  it('commits a page that ended synchronously together with its claim: one transaction, waiting for the flush', async () => {
    const { schema, task, status, reasons } = await setup();
    const log: string[] = [];
    const pool = loggingPool(log);
    const consumer = createQueue({
      store: postgresStore({ pool, schema }),
      runtime: { mode: 'consumer', workerId: 'held' },
    });
    consumer.define(TASK, { execute: (ctx) => ctx.end() });
    cleanups.push(async () => {
      await consumer.close();
      await pool.end();
    });
    await consumer.ready();
    // The tasks' flow states the consumer read at ready() are older than the claim's recheck interval when it claims:
    // a claim that got runs hands them out at once, not after reading the states again.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { runId } = await task.start({ query: { n: 1 } });
    await waitFor(async () => (await status(runId)) === 'success', 'the run to succeed');
    expect(await reasons(runId)).toEqual(['1 STARTED', '2 CLAIMED', '3 COMPLETED']);
    // The claim's select opened the transaction; the one message that commits it writes the claim and the settle.
    const commits = log.filter((text) => text.includes('COMMIT'));
    const writing = commits.filter((text) => text.includes("'CLAIMED'") || text.includes('COMPLETED'));
    expect(writing).toHaveLength(1);
    expect(writing[0]).toContain('COMPLETED');
    expect(writing[0]).toContain("'CLAIMED'");
    expect(writing[0]).not.toContain(UNFLUSHED_COMMIT);
    const opening = log.filter((text) => text.includes('FOR UPDATE SKIP LOCKED') || text.includes('EXECUTE'));
    expect(opening.some((text) => text.startsWith('BEGIN') && !text.includes('COMMIT'))).toBe(true);
  });

  it('commits the claim of a page that is still running at once, without waiting for the flush, and settles it later', async () => {
    const { schema, task, status, reasons } = await setup();
    const log: string[] = [];
    const pool = loggingPool(log);
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const consumer = createQueue({ store: postgresStore({ pool, schema }), runtime: { mode: 'consumer' } });
    consumer.define(TASK, {
      async execute(ctx) {
        await gate;
        return ctx.end();
      },
    });
    cleanups.push(async () => {
      open();
      await consumer.close();
      await pool.end();
    });
    await consumer.ready();
    const { runId } = await task.start({ query: { n: 1 } });
    await waitFor(async () => (await status(runId)) === 'running', 'the claim to commit while the page runs');
    const claimCommit = log.filter((text) => text.includes('COMMIT') && text.includes("'CLAIMED'"));
    expect(claimCommit).toHaveLength(1);
    expect(claimCommit[0]).toContain(UNFLUSHED_COMMIT);
    expect(claimCommit[0]).not.toContain('COMPLETED');
    open();
    await waitFor(async () => (await status(runId)) === 'success', 'the run to succeed');
    expect(await reasons(runId)).toEqual(['1 STARTED', '2 CLAIMED', '3 COMPLETED']);
  });

  it('decides a pure plan sent in the same turn on the claimed run, and runs any other plan after the commit', async () => {
    const { schema, admin, task, status, reasons } = await setup();
    const store = postgresStore({ connectionString: DATABASE_URL as string, schema });
    await store.open();
    cleanups.push(() => store.close());
    const first = await task.start({ query: { n: 1 } });
    const second = await task.start({ query: { n: 2 } });
    const claimed = await store.claimDue(claimRequest());
    expect(claimed.map((run) => run.runId).sort()).toEqual([first.runId, second.runId].sort());
    const [one, two] = [first.runId, second.runId].map((id) => claimed.find((run) => run.runId === id) as RunRecord);
    // Both calls in the same turn as the claim's answer: the pure one goes into the claim's transaction, the other
    // reads the row once that transaction committed.
    const ended = store.transact('default', one!.runId, endPlan(one!.fence), { pure: true });
    const seen = store.transact('default', two!.runId, (_tx, current) => ({ write: null, value: current?.status }));
    expect(await ended).toBe('ended');
    expect(await seen).toBe('running');
    expect(await status(first.runId)).toBe('success');
    expect(await reasons(first.runId)).toEqual(['1 STARTED', '2 CLAIMED', '3 COMPLETED']);
    expect(await reasons(second.runId)).toEqual(['1 STARTED', '2 CLAIMED']);
    // One transaction wrote both claims and the first run's settle: their history rows share its id.
    const writers = await admin.query(
      `SELECT DISTINCT xmin::text FROM "${schema}".docket_history WHERE (run_id = $1 AND seq > 1) OR (run_id = $2 AND seq = 2)`,
      [first.runId, second.runId],
    );
    expect(writers.rows).toHaveLength(1);
    // The held run's later plans go the ordinary way, on the committed row.
    expect(await store.transact('default', two!.runId, endPlan(two!.fence), { pure: true })).toBe('ended');
    expect(await status(second.runId)).toBe('success');
  });

  it('writes nothing for a row whose plan is not the plain claim: the run stays claimable, as it was', async () => {
    const { schema, task, status, reasons } = await setup();
    const store = postgresStore({ connectionString: DATABASE_URL as string, schema });
    await store.open();
    cleanups.push(() => store.close());
    const { runId } = await task.start({ query: { n: 1 } });
    const request = claimRequest();
    // A plan that claims for another owner than the plain claim names: only a bug makes the two differ.
    const differing = { ...request, plan: (run: RunRecord) => planClaim(run, 'worker:other', LEASE_MS, request.now) };
    expect(await store.claimDue(differing)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await status(runId)).toBe('pending');
    expect(await reasons(runId)).toEqual(['1 STARTED']);
    const [claimed] = await store.claimDue(claimRequest());
    expect(claimed?.runId).toBe(runId);
  });

  it('answers OUTCOME_UNKNOWN to a settle written with its claim when the connection dies at COMMIT; the run is as before', async () => {
    const { schema, admin, task, status, reasons } = await setup();
    // COMMIT of any transaction that updated a run sleeps 2 s inside a deferred trigger, where it is terminated.
    await slowCommits(admin, schema, 'UPDATE');
    const store = postgresStore({ connectionString: DATABASE_URL as string, schema });
    await store.open();
    cleanups.push(() => store.close());
    const { runId } = await task.start({ query: { n: 1 } });
    const [run] = await store.claimDue(claimRequest());
    expect(run?.runId).toBe(runId);
    const ended = store.transact('default', runId, endPlan(run!.fence), { pure: true });
    const outcome = ended.then(
      () => null,
      (error: unknown) => error,
    );
    await terminateSlowCommit(admin);
    expect(await outcome).toMatchObject({ code: 'OUTCOME_UNKNOWN', runId, operation: 'store.transact' });
    // Nothing of the transaction landed: the run is claimable as it was, and a read says so.
    expect(await status(runId)).toBe('pending');
    expect(await reasons(runId)).toEqual(['1 STARTED']);
    expect((await store.getRun('default', runId))?.status).toBe('pending');
  });

  it('closes only after the commit of a claim it answered, on a pool the application owns', async () => {
    const { schema, admin, task, status } = await setup();
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 3 });
    cleanups.push(() => pool.end());
    const store = postgresStore({ pool, schema });
    await store.open();
    const { runId } = await task.start({ query: { n: 1 } });
    // The claim's COMMIT takes half a second (within the 2 s close waits at most): a close that did not wait for it
    // would return while the run is still pending.
    await slowCommits(admin, schema, 'UPDATE', 0.5);
    const [run] = await store.claimDue(claimRequest());
    expect(run?.runId).toBe(runId);
    // The claim answered before its transaction committed (at the end of this turn): close waits for that commit.
    await store.close();
    expect(await status(runId)).toBe('running');
  });

  it('answers the next due time once its held claims have committed: a run they claimed is not due again', async () => {
    const { schema, admin, task, status } = await setup();
    const store = postgresStore({ connectionString: DATABASE_URL as string, schema });
    await store.open();
    cleanups.push(() => store.close());
    await task.start({ query: { n: 1 } });
    await slowCommits(admin, schema, 'UPDATE', 0.5);
    const [run] = await store.claimDue(claimRequest());
    expect(run).toBeDefined();
    // Read while the claim's commit still sleeps, the run would be pending and due now: the worker would claim again.
    const due = await store.nextDueAt('default', [TASK]);
    expect(await status(run!.runId)).toBe('running');
    expect(due === null || due > Date.now()).toBe(true);
  });

  it('holds a flow claim the same way: a page ended in its turn, its claim and the claim its rate counts, one commit', async () => {
    const { schema, admin, status, reasons } = await setup();
    const flowTask = { name: 'held-rated', version: '1', flow: { rate: { max: 100, perMs: 60_000 } } };
    const { queue: producer, task } = await serverProducer(schema, flowTask);
    cleanups.push(async () => {
      await producer.close();
    });
    const store = postgresStore({ connectionString: DATABASE_URL as string, schema });
    await store.open();
    cleanups.push(() => store.close());
    const { runId } = await task.start({ query: { n: 1 } });
    const request = { ...claimRequest(), tasks: [{ name: flowTask.name, version: flowTask.version }] };
    const [run] = await store.claimDue(request);
    expect(run?.runId).toBe(runId);
    // In the same turn as the claim's answer: the settle joins the claim's transaction, still open.
    expect(await store.transact('default', runId, endPlan(run!.fence), { pure: true })).toBe('ended');
    expect(await status(runId)).toBe('success');
    expect(await reasons(runId)).toEqual(['1 STARTED', '2 CLAIMED', '3 COMPLETED']);
    const writers = await admin.query(
      `SELECT xmin::text AS tx FROM "${schema}".docket_history WHERE run_id = $1 AND seq > 1
        UNION SELECT xmin::text FROM "${schema}".docket_flow_claims WHERE task_name = $2`,
      [runId, flowTask.name],
    );
    expect(writers.rows).toHaveLength(1);
  });

  it('holds nothing with holdClaims: false: every transaction it begins commits in the same message', async () => {
    const { schema, task, status } = await setup();
    const log: string[] = [];
    const pool = loggingPool(log);
    const store = postgresStore({ pool, schema, holdClaims: false });
    await store.open();
    cleanups.push(async () => {
      await store.close();
      await pool.end();
    });
    const { runId } = await task.start({ query: { n: 1 } });
    const [run] = await store.claimDue(claimRequest());
    expect(run?.runId).toBe(runId);
    expect(await status(runId)).toBe('running');
    const begun = log.filter((text) => text.startsWith('BEGIN'));
    expect(begun.length).toBeGreaterThan(0);
    for (const text of begun) expect(text).toContain('COMMIT');
  });
});
