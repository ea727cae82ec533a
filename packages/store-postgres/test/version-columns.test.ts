import { createQueue } from '@docket/core';
import { type PlainClaim, planClaim, type SelectRequest } from '@docket/core/store';
import { describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { backendForTests, freshSchema } from './helpers.js';

const EMPTY = { definition_hash: '', policy: '', events: '', recovery: '' };
const policy = { attempts: 2, timeoutMs: 5000, backoff: { baseMs: 10, maxMs: 20, jitter: 'full' as const } };
const NOTICE = { name: 'notice', version: '3', policy, events: ['success' as const], recovery: 'manual' as const };

/** A claim of up to `limit` runs of the notice task, with the plain claim described or (`plain: false`) without. */
function claimRequest(limit: number, plain = true): SelectRequest {
  const now = Date.now();
  const plainClaim: PlainClaim = { actor: 'worker:v', leaseExpiresAt: now + 30_000, at: new Date(now).toISOString() };
  return {
    namespace: 'default',
    tasks: [{ name: NOTICE.name, version: NOTICE.version }],
    limit,
    now,
    ...(plain ? { plainClaim } : {}),
    plan: (run) => planClaim(run, 'worker:v', 30_000, now),
  };
}

describe('the columns a task version decides, kept once per version (PostgreSQL)', () => {
  const { db, cleanups } = backendForTests();

  /** A queue on a fresh schema with the notice task, `concurrency` 0 for a producer, and the schema's raw reads. */
  async function open(concurrency: number) {
    const schema = freshSchema();
    await db().query(`CREATE SCHEMA "${schema}"`);
    const runtime = concurrency === 0 ? { mode: 'producer' as const } : { concurrency };
    const queue = createQueue({ store: postgresStore(db().options(schema)), runtime, logger: false });
    cleanups.push(async () => {
      await queue.close();
      await db().query(`DROP SCHEMA "${schema}" CASCADE`);
    });
    const task =
      concurrency === 0
        ? queue.define<{ n: number }>(NOTICE)
        : queue.define<{ n: number }>(NOTICE, { execute: (ctx) => ctx.end() });
    await queue.ready();
    const [definition] = await db().query<{ hash: string }>(
      `SELECT hash FROM "${schema}".docket_definitions WHERE name = 'notice'`,
    );
    const columns = async (runId: string) =>
      (
        await db().query(
          `SELECT definition_hash, policy, events, recovery FROM "${schema}".docket_runs WHERE run_id = $1`,
          [runId],
        )
      )[0];
    /** A store on the schema that has met no task version yet. */
    const fresh = async () => {
      const store = postgresStore(db().options(schema));
      await store.open();
      cleanups.push(() => store.close());
      return store;
    };
    const versionValues = {
      definitionHash: definition?.hash as string,
      policy,
      events: ['success'],
      recovery: 'manual',
    };
    return { schema, queue, task, columns, fresh, versionValues };
  }

  it('leaves them empty in every row of the run it writes, and reads the run with its version values', async () => {
    const { task, columns, fresh, versionValues } = await open(2);
    const { runId } = await task.start({ query: { n: 1 } });
    expect(await columns(runId)).toEqual(EMPTY);
    expect(await task.wait(runId, { timeoutMs: 10_000 })).toMatchObject({ status: 'success' });
    // The claim and the settle wrote the row twice more: it still leaves the version's columns to the version.
    expect(await columns(runId)).toEqual(EMPTY);
    expect(await (await fresh()).getRun('default', runId)).toMatchObject(versionValues);
  });

  it('reads and claims narrow rows from a store that never registered their version', async () => {
    const { task, columns, fresh, versionValues } = await open(0);
    const ids: string[] = [];
    for (let n = 0; n < 6; n++) ids.push((await task.start({ query: { n } })).runId);
    expect(await (await fresh()).getRun('default', ids[0] as string)).toMatchObject(versionValues);
    // The plain claim's statement: the first claim answers whole rows, the next (the shared values learned) the
    // compact answer of fresh runs, both widened by the version loaded on the way.
    const plain = await fresh();
    const first = await plain.claimDue(claimRequest(1));
    const next = await plain.claimDue(claimRequest(2));
    // The ordinary claim: core's plan for each locked row.
    const ordinary = await (await fresh()).claimDue(claimRequest(2, false));
    const claimed = [...first, ...next, ...ordinary];
    expect(claimed.map((run) => run.status)).toEqual(Array(5).fill('running'));
    for (const run of claimed) expect(run).toMatchObject(versionValues);
    for (const run of claimed) expect(await columns(run.runId)).toEqual(EMPTY);
  });

  it('reads a row that holds them in full as the same run', async () => {
    const { schema, task, columns, fresh } = await open(0);
    const { runId } = await task.start({ query: { n: 2 } });
    const store = await fresh();
    const narrow = await store.getRun('default', runId);
    await db().query(
      `UPDATE "${schema}".docket_runs SET definition_hash = $1, policy = $2, events = '["success"]',
        recovery = 'manual' WHERE run_id = $3`,
      [narrow?.definitionHash, JSON.stringify(policy), runId],
    );
    expect(await columns(runId)).not.toEqual(EMPTY);
    expect(await (await fresh()).getRun('default', runId)).toEqual(narrow);
  });
});
