import { createQueue } from '@docket/core';
import { workerClaim } from '@docket/core/conformance';
import type { TaskKey } from '@docket/core/store';
import { waitForStatus } from '@docket/core/testing';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { tablesIn } from '../src/context.js';
import { postgresStore } from '../src/index.js';
import { groupTurnStatements, recordStatements } from '../src/sql/claim/flow-statements.js';
import { backendForTests, claimPlan, DATABASE_URL, freshSchema, indexScans } from './helpers.js';

/** A task whose rates count its claims, and those of each group. */
const rated: TaskKey = { name: 'rated', version: '1' };
const rate = { max: 100, perMs: 1_000 };

describe('the PostgreSQL flow claim', () => {
  const { db, cleanups } = backendForTests();

  async function freshStoreOptions() {
    const schema = freshSchema();
    await db().query(`CREATE SCHEMA "${schema}"`);
    cleanups.push(async () => {
      await db().query(`DROP SCHEMA "${schema}" CASCADE`);
    });
    return db().options(schema);
  }

  it('plans by the task record read under its lock when the limits changed since its state was last read', async () => {
    const options = await freshStoreOptions();
    const task = { name: 'flow-changed', version: '1' };
    const producer = createQueue({ store: postgresStore(options), runtime: { mode: 'producer' } });
    const handle = producer.define({ ...task, flow: { concurrency: 100 } });
    await producer.ready();
    for (const group of ['g1', 'g2', 'g3']) {
      await handle.startMany([
        { query: `${group}-a`, group },
        { query: `${group}-b`, group },
      ]);
    }
    const store = postgresStore(options);
    await store.open();
    cleanups.push(async () => {
      await producer.close();
      await store.close();
    });
    // The first claim reads the task's state (a task limit, no group limit) and keeps it for a while.
    const [first] = await store.claimDue(workerClaim([task], 1).request);
    expect(first?.status).toBe('running');
    // Another process puts the task's groups under a limit of one lease each.
    const other = createQueue({ store: postgresStore(options), runtime: { mode: 'producer' } });
    other.define({ ...task, flow: { group: { concurrency: 1 } } });
    await other.ready();
    await other.close();
    const claimed = await store.claimDue(workerClaim([task], 10).request);
    const groups = claimed.map((run) => run.group);
    expect(groups.sort()).toEqual(['g1', 'g2', 'g3'].filter((group) => group !== first?.group));
  });

  it('claims a group that got due runs after its groups were listed, by the next claim at the latest', async () => {
    const options = await freshStoreOptions();
    const task = { name: 'flow-new-group', version: '1' };
    const producer = createQueue({ store: postgresStore(options), runtime: { mode: 'producer' } });
    const handle = producer.define({ ...task, flow: { group: { concurrency: 5 } } });
    await producer.ready();
    const store = postgresStore(options);
    await store.open();
    cleanups.push(async () => {
      await producer.close();
      await store.close();
    });
    await handle.start({ query: 'old', group: 'old' });
    // This claim lists the groups (only `old`) and keeps the list for its next claims.
    expect((await store.claimDue(workerClaim([task], 10).request)).map((run) => run.group)).toEqual(['old']);
    const { runId } = await handle.start({ query: 'new', group: 'new' });
    const first = await store.claimDue(workerClaim([task], 10).request);
    const second = first.length > 0 ? [] : await store.claimDue(workerClaim([task], 10).request);
    expect([...first, ...second].map((run) => run.runId)).toEqual([runId]);
  });

  it.runIf(DATABASE_URL)(
    "reads the listed groups' claims in the window by their key ranges, not the claims kept past it",
    async () => {
      const options = await freshStoreOptions();
      const store = postgresStore(options);
      await store.open();
      cleanups.push(() => store.close());
      const [, , claims] = groupTurnStatements(tablesIn(store.schema), 'default', 'limited', 5_000, ['a', 'b']);
      if (claims === undefined) throw new Error('groupTurnStatements answers three statements');
      const client = new pg.Client(DATABASE_URL);
      await client.connect();
      cleanups.push(() => client.end());
      const plan = await claimPlan(client, store.schema, 'limited', claims);
      const scans = indexScans(plan);
      expect(scans.map((scan) => scan['Index Name'])).toEqual([
        'docket_flow_claims_namespace_task_name_scope_group_key_at_pk',
      ]);
      // One range per group: the key bound to the group and the window's start, and no row read only to be dropped.
      expect(scans[0]?.['Index Cond']).toMatch(/group_key = k\.group_key.*at >/);
      expect(plan.filter((node) => node['Relation Name'] === 'docket_flow_claims' && node.Filter)).toEqual([]);
    },
  );

  it("ends a flow-limited child whose deadline passed before its claim, and wakes its parent with the child's outcome", async () => {
    const options = await freshStoreOptions();
    const queue = createQueue({ store: postgresStore(options), runtime: { concurrency: 4 } });
    cleanups.push(async () => {
      await queue.close();
    });
    const child = queue.define(
      { name: 'flow-child', version: '1', flow: { concurrency: 2 }, limits: { deadlineMs: 200 } },
      { execute: (ctx) => ctx.end() },
    );
    const seen: unknown[] = [];
    const parent = queue.define(
      { name: 'flow-parent', version: '1' },
      {
        execute(ctx) {
          if (ctx.page === 1) return ctx.next({}, { children: [{ task: child, query: 'late', group: 'g' }] });
          seen.push(...ctx.children.map((c) => ({ status: c.status, reason: c.reason })));
          return ctx.end();
        },
      },
    );
    await queue.ready();
    const pause = { task: 'flow-child', reason: 'hold the child past its deadline', commandId: 'pause' };
    const paused = await queue.operator.tasks.pause({ ...pause, expectedRevision: 1 });
    expect(paused).toMatchObject({ kind: 'applied', paused: true });
    const { runId } = await parent.start({ query: 'p' });
    expect((await waitForStatus(parent, runId, 'waiting')).reason).toBe('CHILDREN_STARTED');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const revision = paused.kind === 'applied' ? paused.revision : 0;
    await queue.operator.tasks.resume({
      task: 'flow-child',
      expectedRevision: revision,
      reason: 'go',
      commandId: 'go',
    });
    await waitForStatus(parent, runId, 'success');
    expect(seen).toEqual([{ status: 'cancelled', reason: 'DEADLINE' }]);
  });

  it.runIf(DATABASE_URL)(
    "prunes a scope's claims past the window as one range of the time index, not by reading every group's claims",
    async () => {
      const store = postgresStore(await freshStoreOptions());
      await store.open();
      cleanups.push(() => store.close());
      const state = { flow: { group: { rate } }, paused: false, holdUntil: null, groupHoldUntil: null };
      const [prune] = recordStatements(tablesIn(store.schema), 'default', rated.name, state, [], Date.now());
      expect(prune?.text).toMatch(/^DELETE FROM/);
      const client = new pg.Client(DATABASE_URL);
      await client.connect();
      cleanups.push(() => client.end());
      const scans = indexScans(await claimPlan(client, store.schema, rated.name, prune as NonNullable<typeof prune>));
      expect(scans.map((scan) => scan['Index Name'])).toEqual(['docket_flow_claims_at']);
      expect(scans[0]?.['Index Cond']).toMatch(/scope = .*at <=/);
    },
  );

  it("keeps a rate's claims of the window and the minute past it, of the task and of each group, and forgets older ones", async () => {
    const options = await freshStoreOptions();
    const producer = createQueue({ store: postgresStore(options), runtime: { mode: 'producer' }, logger: false });
    const handle = producer.define({ ...rated, flow: { rate, group: { rate } } });
    await producer.ready();
    await handle.startMany(['a', 'b', 'c', 'd'].map((group) => ({ query: group, group })));
    const store = postgresStore(options);
    await store.open();
    cleanups.push(async () => {
      await producer.close();
    });
    const start = Date.now() + 1_000;
    // Claims of one run each: at the start, half a minute later, then past a minute and the window after the first.
    const times = [start, start + 30_000, start + 61_001];
    for (const now of times) expect(await store.claimDue(workerClaim([rated], 1, now).request)).toHaveLength(1);
    // A claim's transaction may stay open to the end of its turn (held claims): closed, the store has committed it.
    await store.close();
    const kept = await db().query<{ scope: string; at: number; n: number }>(
      `SELECT scope, at, n FROM "${store.schema}".docket_flow_claims ORDER BY scope, at`,
    );
    const rows = (scope: string) => kept.filter((row) => row.scope === scope).map((row) => [row.at, row.n]);
    expect(rows('task')).toEqual([
      [start + 30_000, 1],
      [start + 61_001, 1],
    ]);
    expect(rows('group')).toEqual([
      [start + 30_000, 1],
      [start + 61_001, 1],
    ]);
  });
});
