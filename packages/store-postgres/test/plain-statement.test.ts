import { createQueue } from '@docket/core';
import {
  type PlainClaim,
  planClaim,
  type RunRecord,
  type RunWrite,
  type SelectRequest,
  type TaskKey,
  transition,
} from '@docket/core/store';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { tablesIn } from '../src/context.js';
import { type PostgresStore, postgresStore } from '../src/index.js';
import { plainClaimStatement } from '../src/sql/claim/plain-statement.js';
import { backendForTests, DATABASE_URL, freshSchema, loggingPool } from './helpers.js';

const ACTOR = 'worker:plain';
const LEASE_MS = 30_000;
const A = { name: 'plain-a', version: '1' };
const B = { name: 'plain-b', version: '1', policy: { attempts: 5 }, events: ['success' as const] };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A claim request as the worker loop makes it (core's `planClaim`, and the plain claim it describes), remembering
 * each plan it made; `plan` may be replaced to make plans that differ from the description.
 */
function claimRequest(tasks: TaskKey[], limit: number, now = Date.now(), plan = planClaim) {
  const planned = new Map<string, { before: RunRecord; write: RunWrite }>();
  const plainClaim: PlainClaim = { actor: ACTOR, leaseExpiresAt: now + LEASE_MS, at: new Date(now).toISOString() };
  const request: SelectRequest = {
    namespace: 'default',
    tasks,
    limit,
    now,
    plainClaim,
    plan(run) {
      const write = plan(run, ACTOR, LEASE_MS, now);
      if (write !== null) planned.set(run.runId, { before: run, write });
      return write;
    },
  };
  return { request, planned };
}

describe('the one-statement plain claim', () => {
  const { db, cleanups } = backendForTests();

  /**
   * A store on a fresh schema, and a producer queue on it that can start runs of task A; `optionsOf` gives
   * the stores' options (the test's backend by default), `after` runs after the schema is dropped. The store under
   * test does not hold its claims open (`holdClaims: false`): held claims have their own tests (held-claims.test.ts).
   */
  async function setup(
    optionsOf: (schema: string) => Parameters<typeof postgresStore>[0] = (schema) => db().options(schema),
    after: () => Promise<void> = async () => undefined,
  ) {
    const schema = freshSchema();
    await db().query(`CREATE SCHEMA "${schema}"`);
    const store = postgresStore({ ...optionsOf(schema), holdClaims: false } as Parameters<typeof postgresStore>[0]);
    const producer = createQueue({ store: postgresStore(optionsOf(schema)), runtime: { mode: 'producer' } });
    const a = producer.define(A);
    await producer.ready();
    await store.open();
    cleanups.push(async () => {
      await store.close();
      await producer.close();
      await db().query(`DROP SCHEMA "${schema}" CASCADE`);
      await after();
    });
    return { schema, store, a };
  }

  /** The run as stored now, which must exist. */
  async function stored(store: PostgresStore, runId: string): Promise<RunRecord> {
    const run = await store.getRun('default', runId);
    if (run === null) throw new Error(`no run ${runId}`);
    return run;
  }

  it('never hands out a run whose plan differs from the plain claim: its lease runs out and recovery takes it', async () => {
    const { store, a } = await setup();
    const { runId } = await a.start({ query: 'odd' });
    // A plan with a shorter lease than the description: what a disagreement between core and the store looks like.
    const shorter: typeof planClaim = (run, actor, _leaseMs, now) => planClaim(run, actor, 5_000, now);
    const now = Date.now();
    const { request, planned } = claimRequest([A], 8, now, shorter);
    expect(await store.claimDue(request)).toEqual([]);
    expect(planned.has(runId)).toBe(true);
    const held = await stored(store, runId);
    expect(held.status).toBe('running');
    expect(held.lease).toEqual({ owner: ACTOR, token: held.fence, expiresAt: now + LEASE_MS });
    const recovered = await store.recoverExpired({
      namespace: 'default',
      limit: 8,
      now: now + LEASE_MS + 1,
      plan: (run) => {
        const decision = transition(
          run,
          { type: 'lease_expired', actor: 'recovery', recoveryLimit: 20 },
          now + LEASE_MS + 1,
        );
        return decision.ok ? { run: decision.run, history: [decision.history], events: decision.events } : null;
      },
    });
    expect(recovered.map((run) => run.runId)).toEqual([runId]);
  });

  it.runIf(DATABASE_URL)('hands out the runs it claimed when the ordinary claim of the rest fails', async () => {
    // A pool whose ordinary claims (a transaction that does not skip the flush) fail while `failing` is set.
    let failing = false;
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string })?.text ?? '');
        if (failing && text.startsWith('BEGIN;') && text.includes('EXECUTE') && !text.includes('synchronous_commit')) {
          return Promise.reject(new Error('injected: the ordinary claim failed'));
        }
        return query(...args);
      };
    });
    const { store, a } = await setup(
      (schema) => ({ pool, schema }),
      () => pool.end(),
    );
    const late = await a.start({ query: 'late', limits: { deadlineAt: new Date(Date.now() + 20).toISOString() } });
    await sleep(40);
    const plain = await a.start({ query: 'plain' });
    failing = true;
    const first = await store.claimDue(claimRequest([A], 8).request);
    expect(first.map((run) => [run.runId, run.status])).toEqual([[plain.runId, 'running']]);
    expect((await stored(store, late.runId)).status).toBe('pending');
    failing = false;
    const second = await store.claimDue(claimRequest([A], 8).request);
    expect(second.map((run) => [run.runId, run.status])).toEqual([[late.runId, 'cancelled']]);
  });

  it('puts back what the claim answers as NULL: every claimed run is its stored row, for one task and for two', async () => {
    const { schema, store, a } = await setup();
    const producer = createQueue({ store: postgresStore(db().options(schema)), runtime: { mode: 'producer' } });
    cleanups.push(async () => {
      await producer.close();
    });
    const b = producer.define(B);
    await producer.ready();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await a.start({ query: { a: i } })).runId);
    for (let i = 0; i < 2; i++) ids.push((await b.start({ query: { b: i } })).runId);
    // The first claim of A knows nothing yet; the second sends what the first read; the third asks for both tasks,
    // so B's rows, which differ from A's in policy and callback kinds, come back in full.
    const claims = [
      await store.claimDue(claimRequest([A], 1).request),
      await store.claimDue(claimRequest([A], 1).request),
      await store.claimDue(claimRequest([A, B], 8).request),
    ];
    expect(claims.map((runs) => runs.length)).toEqual([1, 1, 3]);
    const claimed = claims.flat();
    expect(claimed.map((run) => run.runId).sort()).toEqual([...ids].sort());
    for (const run of claimed) expect(run).toEqual(await stored(store, run.runId));
    expect(claimed.filter((run) => run.taskName === B.name).map((run) => run.policy.attempts)).toEqual([5, 5]);
  });

  it('puts back a fresh run answered in a few columns and a retried run answered whole: each is its stored row', async () => {
    const { schema, store, a } = await setup();
    const primer = await a.start({ query: 'primer' });
    const fresh = await a.start({ query: 'fresh' });
    const retried = await a.start({ query: 'retried' });
    // A run several pages and attempts old, as far as the claim can tell: none of a fresh run's values.
    await db().query(
      `UPDATE "${schema}".docket_runs SET page = 3, page_failures = 2, business_failures = 1, scheduled_retries = 1,
        recoveries = 1, model_calls_used = 4, revision = 7, fence = 3, status = 'retrying', reason = 'ATTEMPT_FAILED',
        updated_at = created_at + 5 WHERE run_id = $1`,
      [retried.runId],
    );
    const before = await stored(store, retried.runId);
    const freshBefore = await stored(store, fresh.runId);
    // The first claim knows no shared values yet and answers the primer whole; the next sends what it learned, so the
    // fresh run comes back in its few columns (its row is never parsed from JSON) and the retried one whole.
    expect((await store.claimDue(claimRequest([A], 1).request)).map((run) => run.runId)).toEqual([primer.runId]);
    const parse = vi.spyOn(JSON, 'parse');
    const { request, planned } = claimRequest([A], 8, Date.now() + 10);
    const claimed = await store.claimDue(request);
    const parsedWhole = parse.mock.calls.map(([text]) => String(text)).filter((text) => text.includes('"run_id"'));
    parse.mockRestore();
    expect(parsedWhole.map((text) => JSON.parse(text).run_id)).toEqual([retried.runId]);
    expect(claimed.map((run) => run.runId).sort()).toEqual([fresh.runId, retried.runId].sort());
    for (const run of claimed) expect(run).toEqual(await stored(store, run.runId));
    // Core planned on the rows as stored: the retried one with its own counters and revision, and the fresh one put
    // together from its few columns, field for field in the order a stored row's record has them.
    expect(planned.get(retried.runId)?.before).toEqual(before);
    const freshPlanned = planned.get(fresh.runId)?.before;
    expect(freshPlanned).toEqual(freshBefore);
    expect(Object.keys(freshPlanned ?? {})).toEqual(Object.keys(freshBefore));
    expect(claimed.find((run) => run.runId === retried.runId)).toMatchObject({
      page: 3,
      pageFailures: 2,
      businessFailures: 1,
      scheduledRetries: 1,
      recoveries: 1,
      modelCallsUsed: 4,
      revision: 8,
      fence: 4,
    });
  });

  it.runIf(DATABASE_URL)(
    'answers a fresh run of the sent shared values in its few varying columns, and any other run whole as JSON',
    async () => {
      const { schema, a } = await setup();
      const fresh = await a.start({ query: 'fresh', idempotencyKey: 'k-1' });
      const other = await a.start({ query: 'other' });
      // Not fresh any more: a page and a state further on, pending again.
      await db().query(
        `UPDATE "${schema}".docket_runs SET page = 2, state = '{"cursor":1}', revision = 4 WHERE run_id = $1`,
        [other.runId],
      );
      const client = new pg.Client(DATABASE_URL);
      await client.connect();
      try {
        const read = async (runId: string) =>
          (await client.query(`SELECT * FROM "${schema}".docket_runs WHERE run_id = $1`, [runId])).rows[0] as Record<
            string,
            string
          >;
        const row = await read(fresh.runId);
        const tables = tablesIn(schema);
        const answer = async (shared: Parameters<typeof plainClaimStatement>[3], hold: boolean) => {
          const { request } = claimRequest([A], 8, Date.now() + 10);
          const { text, params } = plainClaimStatement(tables, request, request.plainClaim!, shared, hold);
          await client.query('BEGIN');
          const rows = (await client.query<Record<string, unknown>>(text, params as unknown[])).rows;
          await client.query('ROLLBACK');
          return new Map(rows.map((r) => [r.run_id as string, r]));
        };
        const sent = {
          definition_hash: row.definition_hash as string,
          policy: row.policy as string,
          events: row.events as string,
          recovery: row.recovery as string,
        };
        for (const hold of [false, true]) {
          const rows = await answer(sent, hold);
          expect(Object.keys(rows.get(fresh.runId) ?? {}).sort()).toEqual(
            [
              'group_key',
              'run_id',
              'query',
              'input_hash',
              'created_at',
              'idempotency_key',
              'deadline_at',
              'model_call_limit',
              'priority',
              'trace_parent',
              'docket_row',
              'docket_plain',
              'docket_claimed',
            ].sort(),
          );
          expect(rows.get(fresh.runId)).toMatchObject({ docket_row: null, idempotency_key: 'k-1' });
          expect(JSON.parse(rows.get(other.runId)?.docket_row as string)).toEqual(await read(other.runId));
        }
        // A shared column other than the one sent: the fresh run comes back whole too.
        const differing = await answer({ ...sent, definition_hash: 'other' }, true);
        expect(JSON.parse(differing.get(fresh.runId)?.docket_row as string)).toEqual(row);
      } finally {
        await client.end();
      }
    },
  );

  it.runIf(DATABASE_URL)('takes one round trip on node-postgres', async () => {
    const log: string[] = [];
    const pool = loggingPool(log);
    const { store, a } = await setup(
      (schema) => ({ pool, schema }),
      () => pool.end(),
    );
    // A claim reads the tasks' flow states once (then at most once a second): this one finds nothing due. A worker's
    // queue registers its tasks' definitions, which its store then knows; this store reads the one it will meet.
    expect(await store.claimDue(claimRequest([A], 8).request)).toEqual([]);
    expect(await store.getDefinition('default', A.name, A.version)).not.toBeNull();
    for (let i = 0; i < 4; i++) await a.start({ query: { i } });
    const { request } = claimRequest([A], 8);
    log.length = 0;
    expect(await store.claimDue(request)).toHaveLength(4);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(/^BEGIN;.*COMMIT$/s);
  });
});
