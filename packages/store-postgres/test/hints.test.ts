import { randomBytes } from 'node:crypto';
import { createQueue, type RunRow, type SelectRequest, transition } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ClaimHints, seal, startPayload } from '../src/hints.js';
import { type PostgresStore, postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema } from './helpers.js';

const TASK = { name: 'hinted', version: '1' };
const KEY = randomBytes(32);
const CHANNEL = 'docket_hinted';
/** A start payload sealed with `KEY` for `CHANNEL`. */
const payload = (rows: RunRow[]) => startPayload(KEY, CHANNEL, 'default', rows);

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

/** A row as a start notification carries it, with only the fields the hints look at set. */
const row = (runId: string, patch: Partial<RunRow> = {}) =>
  ({
    run_id: runId,
    namespace: 'default',
    task_name: TASK.name,
    task_version: TASK.version,
    claim_due_at: 1_000,
    ...patch,
  }) as RunRow;

describe('ClaimHints', () => {
  it('keeps the rows of a payload sealed with its key, and ignores bare namespaces, garbage and forgeries', () => {
    const hints = new ClaimHints(
      () => KEY,
      CHANNEL,
      () => 0,
    );
    const rows = [row('a'), row('b')];
    hints.note('default');
    hints.note('k1:not base64 at all');
    // Rows in the clear, sealed with another key, sealed for another channel, tampered with: none is trusted.
    hints.note(JSON.stringify({ namespace: 'default', rows }));
    hints.note(startPayload(randomBytes(32), CHANNEL, 'default', rows));
    hints.note(startPayload(KEY, 'docket_elsewhere', 'default', rows));
    const sealed = payload(rows);
    const flipped = Buffer.from(sealed.slice(3), 'base64');
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 1;
    hints.note(`k1:${flipped.toString('base64')}`);
    // A key not yet loaded trusts nothing either.
    new ClaimHints(() => null, CHANNEL).note(sealed);
    expect(hints.size).toBe(0);
    hints.note(sealed);
    expect(hints.size).toBe(2);
    expect(seal(KEY, CHANNEL, 'x')).not.toBe(seal(KEY, CHANNEL, 'x'));
  });

  it('hands out only rows the request could claim, oldest first, up to its limit, and forgets what it hands out', () => {
    const hints = new ClaimHints(
      () => KEY,
      CHANNEL,
      () => 0,
    );
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
    const hints = new ClaimHints(
      () => KEY,
      CHANNEL,
      () => now,
    );
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

  it('sends the bare namespace when the sealed rows would not fit in a notification', () => {
    expect(payload([row('big', { query: 'x'.repeat(6_000) })])).toBe('default');
    const small = payload([row('small', { query: '"secret"' })]);
    expect(small.startsWith('k1:')).toBe(true);
    expect(small).not.toContain('secret');
    expect(small.length).toBeLessThanOrEqual(7_000);
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
  async function setup(workers: number) {
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
    const task = producer.define(TASK);
    await producer.ready();
    cleanups.push(async () => {
      await producer.close();
    });
    const stores: { store: PostgresStore; log: string[]; notified: () => number }[] = [];
    for (let i = 0; i < workers; i++) {
      const log: string[] = [];
      const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
      pool.on('connect', (client) => {
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
          const first = args[0] as string | { text?: string };
          log.push(typeof first === 'string' ? first : (first?.text ?? ''));
          return query(...args);
        };
      });
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

  it('claims a start too large for a notification payload the ordinary way', async () => {
    const { task, stores, history } = await setup(1);
    const [worker] = stores as [(typeof stores)[0]];
    const { runId } = await task.start({ query: { pad: 'x'.repeat(8_000) } });
    await waitFor(() => worker.notified() > 0, 'the start notification');
    worker.log.length = 0;
    const claimed = await worker.store.claimDue(claimRequest());
    expect(claimed.map((run) => run.runId)).toEqual([runId]);
    expect(worker.log.some((text) => text.includes('ORDER BY claim_due_at'))).toBe(true);
    expect(await history(runId)).toEqual(['STARTED', 'CLAIMED']);
  });

  it('seals the rows: a plain listener sees no query, and a forged notification is not trusted', async () => {
    const { task, stores, admin, schema } = await setup(1);
    const [worker] = stores as [(typeof stores)[0]];
    const channel = `docket_${schema}`;
    const heard = await listen(channel);

    await task.start({ query: { secret: 'swordfish' } });
    await waitFor(() => heard.length > 0 && worker.notified() > 0, 'the start notification');
    expect(heard[0]?.startsWith('k1:')).toBe(true);
    expect(heard.join()).not.toContain('swordfish');
    expect((await worker.store.claimDue(claimRequest())).map((run) => run.query)).toEqual([{ secret: 'swordfish' }]);

    // A run too large for a sealed payload, then a forged notification that carries its row with another query.
    const { runId } = await task.start({ query: { pad: 'x'.repeat(8_000) } });
    await waitFor(() => worker.notified() > 1, 'the second start notification');
    const [real] = (await admin.query(`SELECT * FROM "${schema}".docket_runs WHERE run_id = $1`, [runId])).rows;
    const forged = JSON.stringify({ namespace: 'default', rows: [{ ...real, query: '{"forged":true}' }] });
    await admin.query('SELECT pg_notify($1, $2)', [channel, forged]);
    await waitFor(() => worker.notified() > 2, 'the forged notification');
    worker.log.length = 0;
    const claimed = await worker.store.claimDue(claimRequest());
    expect(claimed.map((run) => run.runId)).toEqual([runId]);
    expect(claimed[0]?.query).toEqual({ pad: 'x'.repeat(8_000) });
    expect(worker.log.some((text) => text.includes('ORDER BY claim_due_at'))).toBe(true);
  });

  it('runs without claims from notifications when the store can neither read nor make the key', async () => {
    const { admin, schema } = await setup(0);
    await admin.query(`DROP TABLE "${schema}".docket_settings`);
    const heard = await listen(`docket_${schema}`);
    const queue = createQueue({
      store: postgresStore({ connectionString: DATABASE_URL as string, schema }),
      runtime: { mode: 'producer' },
    });
    cleanups.push(async () => {
      await queue.close();
    });
    const task = queue.define(TASK);
    await queue.ready();
    const { runId } = await task.start({ query: { n: 6 } });
    await waitFor(() => heard.length > 0, 'the start notification');
    expect(heard).toEqual(['default']);
    const worker = postgresStore({ connectionString: DATABASE_URL as string, schema });
    await worker.open();
    cleanups.push(() => worker.close());
    expect((await worker.claimDue(claimRequest())).map((run) => run.runId)).toEqual([runId]);
  });
});
