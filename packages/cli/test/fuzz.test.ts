import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueue, type Queue } from '@docket/core';
import { httpProvider } from '@docket/provider-http';
import { postgresStore } from '@docket/store-postgres';
import { sqliteStore } from '@docket/store-sqlite';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/main.js';
import { badText, mutated, notAnInteger, notAString, notJson, refused } from './arbitraries.js';

/**
 * Runs per entry point: eight entry points, so every run of the suite refuses at least 1,200 generated inputs (and
 * 300 more on PostgreSQL when the server is there).
 */
const RUNS = 150;

const dir = mkdtempSync(join(tmpdir(), 'docket-fuzz-'));
const file = join(dir, 'docket.sqlite');
let queue: Queue;
let task: ReturnType<Queue['define']>;
let runId: string;
let revision: number;

/** The store's bytes: the database file and its write-ahead log. A refused input must leave both as they were. */
const fingerprint = () =>
  createHash('sha256')
    .update(readFileSync(file))
    .update(existsSync(`${file}-wal`) ? readFileSync(`${file}-wal`) : '')
    .digest('hex');

/** Malformed `task.start` inputs: one field of a good input spoiled, an unknown key, or no object at all. */
const startInputs = fc.oneof(
  mutated(
    { query: { n: 2 } },
    {
      query: notJson,
      idempotencyKey: fc.oneof(badText, notAString),
      priority: fc.oneof(
        fc.double({ noInteger: true }),
        fc.integer({ min: 1001 }),
        fc.integer({ max: -1001 }),
        fc.string(),
        fc.constant(null),
      ),
      trigger: fc.oneof(
        fc.constantFrom('2027-02-30T00:00:00Z', 'soon', '2027-13-01T00:00:00Z').map((at) => ({ at })),
        badText.map((event) => ({ event })),
        fc.constant({ at: '2027-01-01T00:00:00Z', event: 'both' }),
      ),
      limits: fc.oneof(
        notAnInteger.map((modelCalls) => ({ modelCalls })),
        fc.constant({ deadlineAt: 'tomorrow' }),
      ),
    },
  ),
  fc.oneof(notAString, fc.constant({})),
);

/**
 * Malformed `task.startMany` inputs: too few or too many, not an array, one bad input among good ones, or an array
 * with holes.
 */
const startManyInputs = fc.oneof(
  fc.constant([]),
  fc.subarray([0, 1, 2, 3, 4, 5], { minLength: 1 }).map((holes) => {
    const sparse: unknown[] = new Array(6);
    for (let i = 0; i < 6; i++) if (!holes.includes(i)) sparse[i] = { query: i };
    return sparse;
  }),
  fc.constant(Array.from({ length: 1001 }, (_, i) => ({ query: i }))),
  notAString,
  fc
    .tuple(fc.integer({ min: 0, max: 5 }), notJson)
    .map(([at, query]) => Array.from({ length: 6 }, (_, i) => ({ query: i === at ? query : i }))),
  fc
    .tuple(fc.integer({ min: 0, max: 5 }), badText)
    .map(([at, key]) =>
      Array.from({ length: 6 }, (_, i) => ({ query: i, ...(i === at ? { idempotencyKey: key } : {}) })),
    ),
);

beforeAll(async () => {
  queue = createQueue({
    store: sqliteStore({ filename: file, checkpointMs: 0 }),
    runtime: { mode: 'producer' },
    logger: false,
  });
  task = queue.define({ name: 'fuzzed', version: '1', events: ['success'] });
  await queue.ready();
  ({ runId } = await task.start({ query: { n: 1 }, trigger: { event: 'go' } }));
  revision = (await task.get(runId))?.revision as number;
});
afterAll(async () => {
  await queue.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('generated malformed inputs', () => {
  /** Checks `arbitrary` inputs against `call`: each refused with a documented code, the store unchanged. */
  async function fuzz<T>(arbitrary: fc.Arbitrary<T>, call: (input: T) => unknown): Promise<void> {
    const before = fingerprint();
    await fc.assert(
      fc.asyncProperty(arbitrary, (input) => refused(() => call(input))),
      { numRuns: RUNS },
    );
    expect(fingerprint()).toBe(before);
  }

  it('createQueue options', async () => {
    await fuzz(
      mutated(
        {},
        {
          namespace: fc.oneof(badText, notAString, fc.constantFrom('a/b', ' x', '.x')),
          runtime: fc.oneof(
            notAString,
            notAnInteger.map((concurrency) => ({ concurrency })),
            fc.constantFrom({ mode: 'both' }, [], { concurrency: 5000 }),
            fc.oneof(badText, notAString).map((workerId) => ({ workerId })),
          ),
          protocol: fc.oneof(
            fc.integer({ max: 2999 }).map((leaseMs) => ({ leaseMs })),
            notAnInteger.map((pollMs) => ({ pollMs })),
            fc.constant([]),
          ),
          logger: fc.oneof(fc.constant(true), fc.constant({}), fc.string()),
          logPayloads: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
          telemetry: fc.oneof(fc.constant({ tracer: {} }), fc.constant({ sink: 1 }), fc.constant([])),
        },
      ),
      (options) => createQueue({ ...(options as object), store: sqliteStore({ filename: file }) } as never),
    );
  });

  it('task definitions', async () => {
    const probe = createQueue({ store: sqliteStore({ filename: file, checkpointMs: 0 }), logger: false });
    await fuzz(
      mutated(
        { name: 'ok', version: '1' },
        {
          name: fc.oneof(badText, notAString, fc.constantFrom('has space', 'a/b')),
          version: fc.oneof(badText, notAString),
          policy: fc.oneof(
            notAnInteger.map((attempts) => ({ attempts })),
            fc.constant({ backoff: { baseMs: 10, maxMs: 1 } }),
            fc.constant('fast'),
          ),
          events: fc.oneof(fc.constant(['sometimes']), notAString),
          recovery: fc.string().filter((s) => s !== 'automatic' && s !== 'manual'),
        },
      ),
      (definition) => probe.define(definition as never),
    );
  });

  it('task.start inputs', async () => {
    await fuzz(startInputs, (input) => task.start(input as never));
  });

  it('task.startMany inputs', async () => {
    await fuzz(startManyInputs, (inputs) => task.startMany(inputs as never));
  });

  it('events.deliver', async () => {
    await fuzz(
      fc.oneof(
        mutated({ id: 'e-1', type: 'go' }, { id: notAString, type: notAString, payload: notJson }).map((event) => ({
          target: runId,
          event,
        })),
        fc.oneof(badText, notAString, fc.constant('not-a-run-id')).map((target) => ({
          target,
          event: { id: 'e-2', type: 'go' },
        })),
      ),
      ({ target, event }) => queue.events.deliver(target as never, event as never),
    );
  });

  it('events.deliver: an id or type out of bounds fails the waiting run; a clean event is accepted', async () => {
    const outOfBounds = fc.oneof(
      badText.map((id) => ({ id, type: 'go' })),
      badText.map((type) => ({ id: 'e-ok', type })),
    );
    await fc.assert(
      fc.asyncProperty(outOfBounds, async (event) => {
        const { runId: waiting } = await task.start({ query: null, trigger: { event: 'go' } });
        expect(await queue.events.deliver(waiting, event)).toEqual({
          accepted: false,
          duplicate: false,
          status: 'failed',
        });
        expect((await task.get(waiting))?.reason).toBe('TRIGGER_INVALID');
      }),
      { numRuns: Math.min(RUNS, 60) },
    );
    const clean = fc
      .string({ minLength: 1, maxLength: 40 })
      .filter((s) => !s.includes('\u0000') && !/[\uD800-\uDFFF]/.test(s));
    await fc.assert(
      fc.asyncProperty(clean, async (id) => {
        const { runId: waiting } = await task.start({ query: null, trigger: { event: 'go' } });
        expect(await queue.events.deliver(waiting, { id, type: 'go' })).toEqual({
          accepted: true,
          duplicate: false,
          status: 'pending',
        });
      }),
      { numRuns: Math.min(RUNS, 60) },
    );
  });

  it('operator commands', async () => {
    const command = { runId: '', expectedRevision: 0, reason: 'because', commandId: 'c-1' };
    await fuzz(
      fc.tuple(
        fc.constantFrom('pause', 'resume', 'cancel', 'retry') as fc.Arbitrary<'pause' | 'resume' | 'cancel' | 'retry'>,
        mutated(
          { ...command, runId },
          {
            runId: fc.oneof(badText, notAString, fc.constant('0123')),
            expectedRevision: fc.oneof(notAnInteger, fc.constant(0)),
            reason: fc.oneof(badText, notAString),
            commandId: fc.oneof(badText, notAString),
          },
        ).map((c) => ({ ...c, expectedRevision: c.expectedRevision === 0 ? revision + 0.5 : c.expectedRevision })),
      ),
      ([verb, input]) => queue.operator.runs[verb](input as never),
    );
  });

  it('provider configuration', async () => {
    await fuzz(
      mutated(
        { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' },
        {
          kind: fc.oneof(badText, fc.constantFrom('openai', 'claude', '')),
          baseUrl: fc.oneof(badText, fc.constantFrom('ftp://x', 'not a url', 'http://')),
          model: fc.oneof(badText, notAString),
          headers: fc.oneof(notAString, fc.constant({ 'bad header': 'x' })),
        },
      ),
      (config) => httpProvider(config as never),
    );
  });

  it('docket command flags: usage errors exit 2, refused values exit 1 with their code', async () => {
    const before = fingerprint();
    const words = fc.constantFrom(
      'runs',
      'list',
      'get',
      'pause',
      'stats',
      'dead-letters',
      'replay',
      'schedules',
      'gc',
      'health',
      '--limit',
      '--task',
      '--status',
      '--reason',
      '--expected-revision',
      '--cursor',
      '--bogus',
      '-x',
      '--',
    );
    const values = fc.oneof(
      words,
      badText.filter((s) => s !== ''),
      fc.constantFrom('-1', '1.5', 'abc', '999999'),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(values, { minLength: 1, maxLength: 6 }), async (argv) => {
        const err: string[] = [];
        const io = { out: () => undefined, err: (t: string) => err.push(t), colour: false, env: {}, cwd: dir };
        const code = await main(['--db', file, ...argv, '--status', 'nonsense'], io);
        expect([1, 2]).toContain(code);
        if (code === 1) expect(err.join('\n')).toMatch(/^[A-Z_]+: /);
      }),
      { numRuns: RUNS },
    );
    expect(fingerprint()).toBe(before);
  });
});

describe.runIf(process.env.DOCKET_TEST_DATABASE_URL)('generated malformed starts on PostgreSQL', () => {
  const url = process.env.DOCKET_TEST_DATABASE_URL as string;
  const schema = `docket_fuzz_${process.pid}`;
  let pgQueue: Queue;
  let pgTask: ReturnType<Queue['define']>;
  let admin: pg.Pool;
  beforeAll(async () => {
    admin = new pg.Pool({ connectionString: url, max: 1 });
    pgQueue = createQueue({
      store: postgresStore({ connectionString: url, schema }),
      runtime: { mode: 'producer' },
      logger: false,
    });
    pgTask = pgQueue.define({ name: 'fuzzed', version: '1' });
    await pgQueue.ready();
  });
  afterAll(async () => {
    await pgQueue.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });

  /** The row count of every Docket table of the schema: a refused start must leave each as it was. */
  async function counts(): Promise<Record<string, number>> {
    const tables = ['docket_runs', 'docket_history', 'docket_events', 'docket_commands', 'docket_run_counts'];
    const found: Record<string, number> = {};
    for (const table of tables) {
      found[table] = Number((await admin.query(`SELECT count(*)::int AS n FROM "${schema}".${table}`)).rows[0].n);
    }
    return found;
  }

  it('refuses each start and startMany with a documented code, every table left as it was', async () => {
    await pgTask.start({ query: 'one good run' }).catch(() => undefined);
    const before = await counts();
    await fc.assert(
      fc.asyncProperty(startInputs, (input) => refused(() => pgTask.start(input as never))),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(startManyInputs, (inputs) => refused(() => pgTask.startMany(inputs as never))),
      { numRuns: RUNS },
    );
    expect(await counts()).toEqual(before);
  });
});
