import { createQueue } from '@docket/core';
import { workerClaim } from '@docket/core/conformance';
import type { TaskKey } from '@docket/core/store';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { tablesIn } from '../src/context.js';
import { postgresStore } from '../src/index.js';
import { recordStatements } from '../src/sql/claim/flow-statements.js';
import { backendForTests, claimPlan, DATABASE_URL, freshSchema, indexScans } from './helpers.js';

const task: TaskKey = { name: 'rated', version: '1' };
const rate = { max: 100, perMs: 1_000 };

describe("the claims a rate counts are forgotten a minute past the rate's window (PostgreSQL)", () => {
  const { db, cleanups } = backendForTests();

  async function freshStoreOptions() {
    const schema = freshSchema();
    await db().query(`CREATE SCHEMA "${schema}"`);
    cleanups.push(async () => {
      await db().query(`DROP SCHEMA "${schema}" CASCADE`);
    });
    return db().options(schema);
  }

  it.runIf(DATABASE_URL)(
    "deletes a scope's old claims as one range of the time index, not by reading every group's claims",
    async () => {
      const store = postgresStore(await freshStoreOptions());
      await store.open();
      cleanups.push(() => store.close());
      const state = { flow: { group: { rate } }, paused: false, holdUntil: null, groupHoldUntil: null };
      const [prune] = recordStatements(tablesIn(store.schema), 'default', task.name, state, [], Date.now());
      expect(prune?.text).toMatch(/^DELETE FROM/);
      const client = new pg.Client(DATABASE_URL);
      await client.connect();
      cleanups.push(() => client.end());
      const scans = indexScans(await claimPlan(client, store.schema, task.name, prune as NonNullable<typeof prune>));
      expect(scans.map((scan) => scan['Index Name'])).toEqual(['docket_flow_claims_at']);
      expect(scans[0]?.['Index Cond']).toMatch(/scope = .*at <=/);
    },
  );

  it('keeps the claims of the window and the minute past it, of the task and of each group, and forgets older ones', async () => {
    const options = await freshStoreOptions();
    const producer = createQueue({ store: postgresStore(options), runtime: { mode: 'producer' }, logger: false });
    const handle = producer.define({ ...task, flow: { rate, group: { rate } } });
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
    for (const now of times) expect(await store.claimDue(workerClaim([task], 1, now).request)).toHaveLength(1);
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
