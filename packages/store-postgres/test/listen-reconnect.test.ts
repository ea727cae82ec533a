import { createQueue } from '@docket/core';
import { waitFor } from '@docket/core/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresStore } from '../src/index.js';
import { DATABASE_URL, freshSchema } from './helpers.js';

// Killing a backend needs the real server (.ci/run provides it).
describe.runIf(DATABASE_URL)('the LISTEN connection of a worker', () => {
  let admin: pg.Pool;
  beforeAll(() => {
    admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
  });
  afterAll(() => admin.end());

  it('comes back after its backend is killed: logged, health says degraded meanwhile, and wake-ups work again', async () => {
    const schema = freshSchema();
    const executed: string[] = [];
    const logged: { level: string; message: string }[] = [];
    const at = (level: string) => (_fields: object, message: string) => logged.push({ level, message });
    // A poll a minute apart: a run is only executed at once when a NOTIFY wakes the worker.
    const worker = createQueue({
      store: postgresStore({ connectionString: DATABASE_URL as string, schema }),
      protocol: { pollMs: 60_000 },
      logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
    });
    worker.define<string>(
      { name: 'woken', version: '1' },
      {
        execute(ctx) {
          executed.push(ctx.query);
          return ctx.end();
        },
      },
    );
    const producer = createQueue({
      store: postgresStore({ connectionString: DATABASE_URL as string, schema }),
      runtime: { mode: 'producer' },
    });
    const task = producer.define<string>({ name: 'woken', version: '1' });
    try {
      await worker.ready();
      await producer.ready();
      const listeners = async () =>
        (
          await admin.query(
            'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = $1 AND pid <> pg_backend_pid()',
            [`LISTEN "docket_${schema}"`],
          )
        ).rows as { pid: number }[];
      await waitFor(async () => (await listeners()).length === 1, 'the worker to listen');
      await task.start({ query: 'before' });
      await waitFor(() => executed.includes('before'), 'the run started before the kill', 5_000);
      const [{ pid }] = (await listeners()) as [{ pid: number }];
      // Every LISTEN connection is killed until health has said degraded: a loaded machine's health() may take
      // longer than the store's first wait (0.1 s) before it listens again.
      let keepDown = true;
      const killing = (async () => {
        while (keepDown) {
          for (const listener of await listeners())
            await admin.query('SELECT pg_terminate_backend($1)', [listener.pid]);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      })();
      const degraded = await waitFor(
        async () => {
          const health = await worker.operator.health();
          return health.status === 'degraded' ? health : null;
        },
        'health to say degraded',
        10_000,
      ).finally(() => {
        keepDown = false;
      });
      await killing;
      expect(degraded.reasons.join(' ')).toMatch(/store: LISTEN connection lost/);
      await waitFor(async () => (await listeners()).some((l) => l.pid !== pid), 'a new LISTEN connection', 10_000);
      await waitFor(async () => (await worker.operator.health()).status === 'ready', 'health ready again', 5_000);
      await task.start({ query: 'after' });
      await waitFor(() => executed.includes('after'), 'the run started after the reconnect', 5_000);
      // Each loss is logged once and each return once: as many pairs as connections the killing loop caught.
      const lines = logged.filter((line) => line.message.startsWith('LISTEN'));
      const pair = [
        { level: 'warn', message: 'LISTEN connection lost; listening again, polling meanwhile' },
        { level: 'info', message: 'LISTEN connection is back' },
      ];
      expect(lines.length).toBeGreaterThanOrEqual(2);
      expect(lines).toEqual(Array.from({ length: lines.length / 2 }, () => pair).flat());
    } finally {
      await producer.close();
      await worker.close();
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});
