import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueue, type Queue } from '@docket/core';
import { createDashboard } from '@docket/dashboard';
import { sqliteStore } from '@docket/store-sqlite';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { badText, cleanText, notAString, refused } from './arbitraries.js';
import { docketIn } from './in-process.js';

/** Cases per property. */
const RUNS = 60;

const dir = mkdtempSync(join(tmpdir(), 'docket-fuzz2-'));
const file = join(dir, 'docket.sqlite');
let queue: Queue;
let task: ReturnType<Queue['define']>;
let runId: string;
let counter = 0;

/** The database file and its write-ahead log, hashed: what a refused input must leave as it was. */
const fingerprint = (path = file) =>
  createHash('sha256')
    .update(readFileSync(path))
    .update(existsSync(`${path}-wal`) ? readFileSync(`${path}-wal`) : '')
    .digest('hex');

/** Runs the CLI in this process; answers its exit code and what it printed. */
const docket = (argv: string[], db = file) => docketIn(dir, db, argv);

beforeAll(async () => {
  queue = createQueue({
    store: sqliteStore({ filename: file, checkpointMs: 0 }),
    runtime: { mode: 'producer' },
    logger: false,
  });
  task = queue.define({ name: 'fuzzed', version: '1' });
  await queue.ready();
  ({ runId } = await task.start({ query: { n: 1 } }));
});
afterAll(async () => {
  await queue.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('valid input is accepted, as given', () => {
  it('task.start stores the query and priority it was given, and its key answers the same run again', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue({ maxDepth: 4 }),
        cleanText,
        fc.integer({ min: -1000, max: 1000 }),
        async (query, key, priority) => {
          const idempotencyKey = `${counter++}:${key}`;
          const answer = await task.start({ query, idempotencyKey, priority });
          expect(answer.created).toBe(true);
          const stored = await task.get(answer.runId);
          expect(stored?.query).toEqual(JSON.parse(JSON.stringify(query)));
          expect(stored?.priority).toBe(priority);
          // The same key again answers the same run, not a second one.
          const again = await task.start({ query, idempotencyKey, priority });
          expect(again).toMatchObject({ runId: answer.runId, created: false });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('task.startMany creates every input, in input order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 1, maxLength: 20 }), async (queries) => {
        const answers = await task.startMany(queries.map((query) => ({ query })));
        expect(answers.map((a) => a.created)).toEqual(queries.map(() => true));
        const stored = await Promise.all(answers.map((a) => task.get(a.runId)));
        expect(stored.map((run) => run?.query)).toEqual(queries.map((q) => JSON.parse(JSON.stringify(q))));
      }),
      { numRuns: RUNS / 2 },
    );
  });

  it('createQueue takes any clean worker id up to 128 bytes', () => {
    fc.assert(
      fc.property(cleanText, (workerId) => {
        const made = createQueue({ store: sqliteStore({ filename: file }), runtime: { workerId }, logger: false });
        expect(typeof made.define).toBe('function');
      }),
      { numRuns: RUNS },
    );
  });
});

describe('schedules both ways', () => {
  const minute = fc.integer({ min: 0, max: 59 });
  const hour = fc.integer({ min: 0, max: 23 });

  it('a cron whose fields are in range is accepted and listed; refused ones write nothing', async () => {
    await fc.assert(
      fc.asyncProperty(minute, hour, fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/), async (m, h, name) => {
        const id = `s${counter++}-${name}`;
        await task.schedule(id, { cron: `${m} ${h} * * *`, query: { m } });
        const { items } = await queue.operator.schedules.list({ limit: 200 });
        expect(items.map((item) => item.id)).toContain(id);
      }),
      { numRuns: RUNS / 2 },
    );
    const before = fingerprint();
    const bad = fc.oneof(
      fc.record({ cron: fc.constantFrom('0 0 31 2 *', '61 * * * *', '* * *', 'daily', '') }),
      fc.record({ cron: fc.constant('0 9 * * *'), timezone: fc.constantFrom('Mars/Base', '', 'UTC+25') }),
      fc.record({ cron: fc.constant('0 9 * * *'), misfire: fc.constantFrom('never', '', 'ALL') }),
      fc.record({ cron: fc.constant('0 9 * * *'), enabled: notAString }),
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(badText, cleanText), bad, (id, options) =>
        refused(() => task.schedule(id, options as never)),
      ),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(badText, (id) => refused(() => task.schedule(id, { cron: '0 9 * * *', query: {} }))),
      { numRuns: RUNS / 2 },
    );
    expect(fingerprint()).toBe(before);
  });
});

describe('the command line, past its flags', () => {
  it('well-formed read commands answer 0', async () => {
    const reads = fc.oneof(
      fc.integer({ min: 1, max: 200 }).map((n) => ['runs', 'list', '--limit', String(n)]),
      fc.constantFrom('pending', 'running', 'success', 'failed').map((s) => ['runs', 'list', '--status', s]),
      fc.constant(['runs', 'get', runId]),
      fc.constant(['runs', 'history', runId]),
      fc.constant(['stats']),
      fc.constant(['schedules', 'list']),
      fc.constant(['dead-letters', 'list']),
    );
    await fc.assert(
      fc.asyncProperty(reads, async (argv) => {
        const answer = await docket(['--json', ...argv]);
        expect({ argv, code: answer.code, err: answer.err }).toEqual({ argv, code: 0, err: '' });
        JSON.parse(answer.out);
      }),
      { numRuns: RUNS / 2 },
    );
  });

  it('commands that reach the store with refused values exit 1 with a code, the file unchanged', async () => {
    const before = fingerprint();
    const text = badText.filter((s) => s !== '' && !s.startsWith('-'));
    const writes = fc.oneof(
      fc
        .tuple(fc.constantFrom('cancel', 'pause', 'resume', 'retry'), text)
        .map(([verb, reason]) => ['runs', verb, runId, '--reason', reason]),
      fc
        .tuple(fc.constantFrom('cancel', 'pause', 'retry'), text)
        .map(([verb, id]) => ['runs', verb, id, '--reason', 'fuzz']),
      text.map((id) => ['runs', 'get', id]),
      text.map((id) => ['schedules', 'pause', id, '--reason', 'fuzz']),
      text.map((id) => ['dead-letters', 'replay', id, '--reason', 'fuzz']),
      text.map((cursor) => ['runs', 'list', '--cursor', cursor]),
    );
    await fc.assert(
      fc.asyncProperty(writes, async (argv) => {
        const answer = await docket(argv);
        expect({ argv, code: answer.code }).toEqual({ argv, code: 1 });
        // A refusal prints its code on stderr; a lookup that finds nothing says so ("no dead letter …").
        expect(answer.err || answer.out).toMatch(/^[A-Z_]+: |^no /);
      }),
      { numRuns: RUNS },
    );
    expect(fingerprint()).toBe(before);
  });

  it('every command on a file that is not Docket’s exits 1 with a code and leaves it byte for byte', async () => {
    const commands = [
      ['runs', 'list'],
      ['stats'],
      ['health'],
      ['gc'],
      ['runs', 'cancel', runId, '--reason', 'x'],
      ['schedules', 'pause', 'nightly', '--reason', 'x'],
      ['dead-letters', 'replay', 'e', '--reason', 'x'],
    ];
    const foreign = fc.oneof(
      fc.uint8Array({ minLength: 0, maxLength: 2048 }).map((bytes) => ({ bytes })),
      fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/).map((table) => ({ table })),
    );
    await fc.assert(
      fc.asyncProperty(foreign, fc.constantFrom(...commands), async (made, argv) => {
        const path = join(dir, `foreign-${counter++}.sqlite`);
        if ('bytes' in made) writeFileSync(path, made.bytes);
        else {
          const db = new Database(path);
          db.exec(`CREATE TABLE "${made.table}" (x); INSERT INTO "${made.table}" VALUES (1)`);
          db.close();
        }
        const before = fingerprint(path);
        const answer = await docket(argv, path);
        expect({ argv, code: answer.code }).toEqual({ argv, code: 1 });
        expect(answer.err).toMatch(/^[A-Z_]+: /);
        expect(fingerprint(path)).toBe(before);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('the dashboard under generated requests', () => {
  it('never answers 5xx, answers 421 to a host it does not serve, and writes nothing', async () => {
    const dashboard = createDashboard({ store: sqliteStore({ filename: file, checkpointMs: 0 }) });
    try {
      const before = fingerprint();
      const request = fc.record({
        method: fc.constantFrom('GET', 'POST'),
        path: fc.constantFrom('/', '/runs', `/runs/${runId}`, `/runs/${runId}/cancel`, '/schedules', '//evil.example/'),
        host: fc.oneof(fc.constant('127.0.0.1:4620'), fc.constant('localhost'), fc.domain()),
        origin: fc.option(fc.webUrl(), { nil: undefined }),
        cookie: fc.option(fc.string(), { nil: undefined }),
        body: fc.option(fc.string({ maxLength: 300 }), { nil: undefined }),
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ method, path, host, origin, cookie, body }) => {
          const headers = new Headers({ host });
          if (origin !== undefined) headers.set('origin', origin);
          if (cookie !== undefined && [...cookie].every((c) => c >= ' ' && c <= '~')) headers.set('cookie', cookie);
          if (body !== undefined) headers.set('content-type', 'application/x-www-form-urlencoded');
          const response = await dashboard(
            new Request(`http://${host}${path}`, {
              method,
              headers,
              body: method === 'POST' ? (body ?? '') : undefined,
            }),
          );
          await response.arrayBuffer();
          expect(response.status).toBeLessThan(500);
          const served = host === 'localhost' || host.startsWith('127.0.0.1');
          if (!served) expect(response.status).toBe(421);
        }),
        { numRuns: RUNS * 2 },
      );
      expect(fingerprint()).toBe(before);
    } finally {
      await dashboard.close();
    }
  });
});
