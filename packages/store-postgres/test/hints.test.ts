import { createQueue, type RunRow, type SelectRequest, transition } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ClaimHints, HINTED, startPayload, WITHHELD } from '../src/hints.js';
import { type PostgresStore, postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema, loggingPool } from './helpers.js';

const TASK = { name: 'hinted', version: '1' };
/** A start payload for namespace `default`. */
const payload = (rows: RunRow[]) => startPayload('default', rows);

/** A claim request for `TASK` whose plan claims for worker `w` and counts the rows it was shown. */
function claimRequest(now = Date.now()): SelectRequest & { shown: string[] } {
  const shown: string[] = [];
  return {
    namespace: 'default',
    tasks: [TASK],
    limit: 8,
    now,
    shown,
    plan(run) {
      shown.push(run.runId);
      const decision = transition(run, { type: 'claim', actor: 'w', leaseMs: 30_000, explicit: false }, now);
      return decision.ok ? { run: decision.run, history: [decision.history], events: decision.events } : null;
    },
  };
}

/** A whole run row (as the start's statement writes it), with only the fields the hints look at chosen. */
const row = (runId: string, patch: Partial<RunRow> = {}) =>
  ({
    ...Object.fromEntries(HINTED.map((column) => [column, null])),
    run_id: runId,
    namespace: 'default',
    task_name: TASK.name,
    task_version: TASK.version,
    claim_due_at: 1_000,
    query: '{"secret":"swordfish"}',
    state: null,
    error: null,
    idempotency_key: 'order-17',
    input_hash: 'abc123',
    trigger_event: null,
    ...patch,
  }) as RunRow;

describe('ClaimHints', () => {
  it('keeps the hinted columns of a start payload, and ignores bare namespaces, garbage and rows missing a column', () => {
    const hints = new ClaimHints(() => 0);
    const sent = payload([row('a'), row('b')]);
    hints.note('default');
    hints.note('h1:not json at all');
    hints.note('h1:{"rows":"no"}');
    const { rows } = JSON.parse(sent.slice(3)) as { rows: Record<string, unknown>[] };
    const lacking: Record<string, unknown> = { ...rows[0], run_id: 'lacking' };
    delete lacking.revision;
    hints.note(`h1:${JSON.stringify({ namespace: 'default', rows: [lacking, null, 'x'] })}`);
    expect(hints.size).toBe(0);
    hints.note(sent);
    expect(hints.size).toBe(2);
    // A payload that carries more (an application column, an unknown one) is kept as the hinted columns only.
    const more = { ...rows[0], run_id: 'more', query: '{"forged":true}', extra: 1 };
    hints.note(`h1:${JSON.stringify({ namespace: 'default', rows: [more] })}`);
    const taken = hints.take({ ...claimRequest(2_000), limit: 8 });
    expect(taken.map((r) => r.run_id)).toEqual(['a', 'b', 'more']);
    expect(Object.keys(taken[2] as object)).toEqual([...HINTED]);
  });

  it('carries no application column of a run: no query, state, error, idempotency key or input hash', () => {
    const sent = payload([row('a')]);
    expect(sent.startsWith('h1:')).toBe(true);
    expect(sent).not.toContain('swordfish');
    expect(sent).not.toContain('order-17');
    expect(sent).not.toContain('abc123');
    const [carried] = (JSON.parse(sent.slice(3)) as { rows: Record<string, unknown>[] }).rows;
    for (const column of WITHHELD) expect(carried).not.toHaveProperty(column);
    expect(Object.keys(carried as object)).toEqual([...HINTED]);
  });

  it('hands out only rows the request could claim, oldest first, up to its limit, and forgets what it hands out', () => {
    const hints = new ClaimHints(() => 0);
    const rows = [
      row('other-namespace', { namespace: 'elsewhere' }),
      row('other-task', { task_name: 'another' }),
      row('not-due', { claim_due_at: 5_000 }),
      row('waiting', { claim_due_at: null }),
      row('first'),
      row('second'),
      row('third'),
    ];
    hints.note(payload(rows));
    const taken = hints.take({ ...claimRequest(2_000), limit: 2 });
    expect(taken.map((r) => r.run_id)).toEqual(['first', 'second']);
    expect(hints.take(claimRequest(2_000)).map((r) => r.run_id)).toEqual(['third']);
    // The rows no request could claim stay until they are stale.
    expect(hints.size).toBe(4);
  });

  it('drops rows older than two seconds and keeps at most 512', () => {
    let now = 0;
    const hints = new ClaimHints(() => now);
    hints.note(payload([row('old')]));
    now = 2_001;
    expect(hints.take(claimRequest(2_001))).toEqual([]);
    expect(hints.size).toBe(0);
    for (let i = 0; i < 600; i += 6) {
      hints.note(payload(Array.from({ length: 6 }, (_, j) => row(`r${i + j}`))));
    }
    expect(hints.size).toBe(512);
    // The oldest went first.
    expect(hints.take({ ...claimRequest(2_001), limit: 1 })[0]?.run_id).toBe('r88');
  });

  it('sends the bare namespace when the rows would not fit in a notification', () => {
    const many = Array.from({ length: 40 }, (_, i) => row(`r${i}`, { policy: 'p'.repeat(200) }));
    expect(payload(many)).toBe('default');
    expect(payload(many.slice(0, 2)).length).toBeLessThanOrEqual(7_000);
    // The query does not count: it never travels.
    expect(payload([row('big', { query: JSON.stringify('x'.repeat(6_000)) })]).startsWith('h1:')).toBe(true);
  });
});

// The one-round-trip claim needs node-postgres (PGlite has no session), and several connections.
describe.runIf(DATABASE_URL)('claims from start notifications', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** The payloads a plain client (no Docket, no key) hears on `channel`, as they arrive. */
  async function listen(channel: string): Promise<string[]> {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    cleanups.push(async () => {
      await client.end();
    });
    const heard: string[] = [];
    client.on('notification', (message) => heard.push(message.payload ?? ''));
    await client.query(`LISTEN "${channel}"`);
    return heard;
  }

  /** A producer queue and `workers` stores on a fresh schema, each worker store on a pool that logs its queries. */
  async function setup(workers: number, definition: { name: string; version: string; events?: 'failure'[] } = TASK) {
    const schema = freshSchema();
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    cleanups.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    });
    const producer = createQueue({
      store: postgresStore({ connectionString: DATABASE_URL as string, schema }),
      runtime: { mode: 'producer' },
    });
    const task = producer.define(definition);
    await producer.ready();
    cleanups.push(async () => {
      await producer.close();
    });
    const stores: { store: PostgresStore; log: string[]; notified: () => number }[] = [];
    for (let i = 0; i < workers; i++) {
      const log: string[] = [];
      const pool = loggingPool(log);
      const store = postgresStore({ pool, schema });
      await store.open();
      let notified = 0;
      const unsubscribe = store.subscribe?.(() => notified++);
      cleanups.push(async () => {
        unsubscribe?.();
        await store.close();
        await pool.end();
      });
      stores.push({ store, log, notified: () => notified });
    }
    const channel = `LISTEN "docket_${schema}"`;
    await waitFor(
      async () =>
        (await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1', [channel])).rows[0].n ===
        workers,
      'every worker store to listen',
    );
    const history = async (runId: string) =>
      (
        await admin.query(`SELECT reason FROM "${schema}".docket_history WHERE run_id = $1 ORDER BY seq`, [runId])
      ).rows.map((r) => r.reason as string);
    return { task, stores, history, admin, schema };
  }

  it('claims a run another store started in one round trip, from the row its notification carried', async () => {
    const { task, stores, history } = await setup(1);
    const [worker] = stores as [(typeof stores)[0]];
    const { runId } = await task.start({ query: { n: 1 } });
    await waitFor(() => worker.notified() > 0, 'the start notification');
    worker.log.length = 0;
    const request = claimRequest();
    const claimed = await worker.store.claimDue(request);
    expect(claimed.map((run) => run.runId)).toEqual([runId]);
    expect(claimed[0]?.status).toBe('running');
    // One message: the guarded write, and no locking select of candidates before it.
    expect(worker.log).toHaveLength(1);
    expect(worker.log[0]).toContain('FOR UPDATE SKIP LOCKED');
    expect(worker.log[0]).not.toContain('ORDER BY claim_due_at');
    expect(await history(runId)).toEqual(['STARTED', 'CLAIMED']);
    expect((await task.get(runId))?.status).toBe('running');
  });

  it('hands the handler the query the claim read back: a worker queue executes a hinted claim with the real row', async () => {
    const { task, schema } = await setup(0);
    const log: string[] = [];
    const pool = loggingPool(log);
    const seen: unknown[] = [];
    // A poll far away: the claim after the start can only come from its notification.
    const consumer = createQueue({
      store: postgresStore({ pool, schema }),
      runtime: { mode: 'consumer' },
      protocol: { pollMs: 600_000 },
    });
    consumer.define(TASK, {
      execute(ctx) {
        seen.push({ query: ctx.query, runId: ctx.runId });
        return ctx.end();
      },
    });
    cleanups.push(async () => {
      await consumer.close();
      await pool.end();
    });
    await consumer.ready();
    await waitFor(() => log.some((text) => text.startsWith('LISTEN')), 'the consumer to listen');
    await new Promise((resolve) => setTimeout(resolve, 50));
    log.length = 0;
    const { runId } = await task.start({ query: { secret: 'swordfish' } });
    await waitFor(() => seen.length > 0, 'the handler');
    expect(seen).toEqual([{ query: { secret: 'swordfish' }, runId }]);
    // Claimed from the hint: the first claim message is the hinted write, no locking select of candidates.
    const claims = log.filter((text) => text.includes('FOR UPDATE SKIP LOCKED'));
    expect(claims[0]).not.toContain('ORDER BY claim_due_at');
    await waitFor(async () => (await task.get(runId))?.status === 'success', 'the run to succeed');
  });

  it('does not claim a hinted run that changed since its start, and decides on the current row instead', async () => {
    const { task, stores, history } = await setup(1);
    const [worker] = stores as [(typeof stores)[0]];
    const { runId } = await task.start({ query: { n: 2 } });
    await waitFor(() => worker.notified() > 0, 'the start notification');
    expect(await task.cancel(runId)).toMatchObject({ found: true, status: 'cancelled', changed: true });
    const request = claimRequest();
    expect(await worker.store.claimDue(request)).toEqual([]);
    // The plan saw the hinted (pending) row and planned a claim, which did not land.
    expect(request.shown).toEqual([runId]);
    expect(await history(runId)).toEqual(['STARTED', 'CANCELLED']);
    expect((await task.get(runId))?.status).toBe('cancelled');
  });

  it('lets exactly one of two hinted stores claim a run', async () => {
    const { task, stores, history } = await setup(2);
    const { runId } = await task.start({ query: { n: 3 } });
    await waitFor(() => stores.every((s) => s.notified() > 0), 'both start notifications');
    const claims = await Promise.all(stores.map((s) => s.store.claimDue(claimRequest())));
    expect(claims.flat().map((run) => run.runId)).toEqual([runId]);
    expect(await history(runId)).toEqual(['STARTED', 'CLAIMED']);
  });

  it('claims starts too many for one notification payload the ordinary way', async () => {
    const { task, stores, history } = await setup(1);
    const [worker] = stores as [(typeof stores)[0]];
    // Concurrent starts share one insert and one notification; 40 rows do not fit in its payload.
    const started = await Promise.all(Array.from({ length: 40 }, (_, n) => task.start({ query: { n } })));
    await waitFor(() => worker.notified() > 0, 'the start notification');
    worker.log.length = 0;
    const claimed = await worker.store.claimDue(claimRequest());
    expect(claimed).toHaveLength(8);
    expect(worker.log.some((text) => text.includes('ORDER BY claim_due_at'))).toBe(true);
    expect(await history(claimed[0]?.runId as string)).toEqual(['STARTED', 'CLAIMED']);
    expect(started.map((s) => s.runId)).toEqual(expect.arrayContaining(claimed.map((run) => run.runId)));
  });

  it('sends no query to a plain listener, reads it back with the claim, and claims nothing from a forged hint', async () => {
    const { task, stores, admin, schema, history } = await setup(1);
    const [worker] = stores as [(typeof stores)[0]];
    const channel = `docket_${schema}`;
    const heard = await listen(channel);

    await task.start({ query: { secret: 'swordfish' }, idempotencyKey: 'order-17' });
    await waitFor(() => heard.length > 0 && worker.notified() > 0, 'the start notification');
    expect(heard[0]?.startsWith('h1:')).toBe(true);
    expect(heard.join()).not.toContain('swordfish');
    expect(heard.join()).not.toContain('order-17');
    worker.log.length = 0;
    const [claimed] = await worker.store.claimDue(claimRequest());
    expect(claimed?.query).toEqual({ secret: 'swordfish' });
    expect(claimed?.idempotencyKey).toBe('order-17');
    expect(claimed?.inputHash).toMatch(/^[0-9a-f]{64}$/);
    expect(worker.log).toHaveLength(1);

    // A forged hint for a real run that says its attempts may take one millisecond: the server's comparison refuses
    // it, and the ordinary claim reads the real row.
    const { runId } = await task.start({ query: { n: 2 } });
    await waitFor(() => worker.notified() > 1 && heard.some((text) => text.includes(runId)), 'its notification');
    const real = heard.find((text) => text.includes(runId)) as string;
    const hint = JSON.parse(real.slice(3)) as { namespace: string; rows: Record<string, unknown>[] };
    const policy = JSON.parse(hint.rows[0]?.policy as string) as { timeoutMs: number };
    const forged = { ...hint, rows: [{ ...hint.rows[0], policy: JSON.stringify({ ...policy, timeoutMs: 1 }) }] };
    await admin.query('SELECT pg_notify($1, $2)', [channel, `h1:${JSON.stringify(forged)}`]);
    await waitFor(() => worker.notified() > 2, 'the forged notification');
    worker.log.length = 0;
    const again = await worker.store.claimDue(claimRequest());
    expect(again.map((run) => run.runId)).toEqual([runId]);
    expect(again[0]?.policy.timeoutMs).toBe(policy.timeoutMs);
    // The hinted write, which landed nowhere, then the ordinary claim's select and write.
    expect(worker.log).toHaveLength(3);
    expect(worker.log[1]).toContain('ORDER BY claim_due_at');
    expect(await history(runId)).toEqual(['STARTED', 'CLAIMED']);
  });

  it('leaves a hinted run whose claim would write a callback event (past its deadline) to the ordinary claim', async () => {
    const { task, stores, admin, schema, history } = await setup(1, { ...TASK, events: ['failure'] });
    const [worker] = stores as [(typeof stores)[0]];
    const { runId } = await task.start({
      query: { secret: 'swordfish' },
      limits: { deadlineAt: new Date(Date.now() + 20).toISOString() },
    });
    await waitFor(() => worker.notified() > 0, 'the start notification');
    await new Promise((resolve) => setTimeout(resolve, 40));
    worker.log.length = 0;
    const [cancelled] = await worker.store.claimDue(claimRequest());
    expect(cancelled).toMatchObject({ runId, status: 'cancelled', reason: 'DEADLINE' });
    // No hinted write (the plan carries a callback event, which holds the query): straight to the ordinary claim.
    expect(worker.log[0]).toContain('ORDER BY claim_due_at');
    expect(await history(runId)).toEqual(['STARTED', 'DEADLINE']);
    const events = await admin.query(`SELECT kind, query FROM "${schema}".docket_events WHERE run_id = $1`, [runId]);
    expect(events.rows).toEqual([{ kind: 'failure', query: '{"secret":"swordfish"}' }]);
  });
});
