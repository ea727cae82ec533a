import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue, type Queue } from '@docket/core';
import { waitFor, waitForStatus } from '@docket/core/testing';
import { sqliteStore } from '@docket/store-sqlite';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliAt } from './in-process.js';

const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'docket-cli-'));
const db = join(dir, 'docket.sqlite');
let api: Queue;
let ids: { done: string[]; failed: string; idle: string[]; parent: string };

/** Runs the CLI in this process, in this file's directory. */
const docket = cliAt(dir);
/** Runs the built binary in a child process: exit codes and output as a shell sees them. */
function binary(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 30_000,
  });
}
const json = async (args: string[]) => {
  const result = await docket(['--db', db, '--json', ...args]);
  expect(result.code, result.err).toBe(0);
  return JSON.parse(result.out);
};
const fingerprint = (file: string) =>
  `${createHash('sha256').update(readFileSync(file)).digest('hex')}:${statSync(file).mtimeMs}`;

beforeAll(async () => {
  // A worker queue that finishes runs, fails one, and dead-letters its failure callback.
  const worker = createQueue({
    store: sqliteStore({ filename: db }),
    protocol: { pollMs: 10 },
    defaults: { callbackPolicy: { attempts: 1, backoff: { baseMs: 1, maxMs: 1 } } },
  });
  const work = worker.define<{ fail: boolean }>(
    { name: 'work', version: '1', events: ['failure'], policy: { attempts: 1 } },
    {
      execute(ctx) {
        if (ctx.query.fail) throw new Error('boom');
        return ctx.end();
      },
      onFailure() {
        throw new Error('receiver down');
      },
    },
  );
  // A parent whose first page starts two children, and ends once they settled.
  const piece = worker.define({ name: 'piece', version: '1' }, { execute: (ctx) => ctx.end() });
  const fan = worker.define(
    { name: 'fan', version: '1' },
    {
      execute: (ctx) =>
        ctx.page === 1 ? ctx.next(null, { children: [0, 1].map((n) => ({ task: piece, query: n })) }) : ctx.end(),
    },
  );
  await worker.ready();
  const parent = (await fan.start({ query: null })).runId;
  await waitForStatus(fan, parent, 'success');
  const done = [];
  for (let i = 0; i < 3; i++) done.push((await work.start({ query: { fail: false } })).runId);
  const failed = (await work.start({ query: { fail: true } })).runId;
  for (const id of done) await waitForStatus(work, id, 'success');
  await waitForStatus(work, failed, 'failed');
  await waitFor(async () => (await work.get(failed))?.callbacks.deadLetters === 1, 'a dead letter');
  await worker.close();
  // A producer-only task nobody executes: its runs stay pending for the operator commands.
  api = createQueue({ store: sqliteStore({ filename: db }), runtime: { mode: 'producer' } });
  const idle = api.define({ name: 'idle', version: '1' });
  api.define({ name: 'work', version: '1', events: ['failure'], policy: { attempts: 1 } });
  await api.ready();
  const idleIds = [];
  for (let i = 0; i < 3; i++) idleIds.push((await idle.start({ query: i })).runId);
  ids = { done, failed, idle: idleIds, parent };
}, 60_000);

afterAll(async () => {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('docket runs', () => {
  it('runs get shows a parent with its children by status, and each child its parent; runs list --parent lists them', async () => {
    const parent = await docket(['--db', db, 'runs', 'get', ids.parent]);
    expect(parent.code).toBe(0);
    expect(parent.out).toMatch(/parent\s+-/);
    expect(parent.out).toContain(
      `children     2 of 2 settled; success 2; list: docket runs list --parent ${ids.parent}`,
    );
    const children = await json(['runs', 'list', '--parent', ids.parent]);
    expect(children.items).toHaveLength(2);
    const child = await docket(['--db', db, 'runs', 'get', children.items[0].runId]);
    expect(child.out).toMatch(new RegExp(`parent\\s+${ids.parent}`));
    expect(child.out).toMatch(/children\s+-/);
    expect(await json(['runs', 'get', ids.parent])).toMatchObject({
      parentRunId: null,
      children: { total: 2, settled: 2 },
    });
    const bad = await docket(['--db', db, 'runs', 'list', '--parent', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--parent takes a run id');
  });

  it('lists runs with filters and cursors, as the API does', async () => {
    const all = await json(['runs', 'list']);
    expect(all).toEqual(JSON.parse(JSON.stringify(await api.operator.runs.list())));
    expect(all.items).toHaveLength(10);
    const failed = await json(['runs', 'list', '--status', 'failed']);
    expect(failed.items.map((r: { runId: string }) => r.runId)).toEqual([ids.failed]);
    const idle = await json(['runs', 'list', '--task', 'idle', '--limit', '2']);
    const newestIdle = [...ids.idle].reverse();
    expect(idle.items.map((r: { runId: string }) => r.runId)).toEqual(newestIdle.slice(0, 2));
    expect(idle.items[0]).not.toHaveProperty('query');
    const next = await json(['runs', 'list', '--task', 'idle', '--limit', '2', '--cursor', idle.nextCursor]);
    expect(next).toMatchObject({ nextCursor: null });
    expect(next.items.map((r: { runId: string }) => r.runId)).toEqual([newestIdle[2]]);
    const payloads = await json(['runs', 'list', '--task', 'idle', '--limit', '1', '--payloads']);
    expect(payloads.items[0]).toMatchObject({ runId: newestIdle[0], query: 2 });
    const human = await docket(['--db', db, 'runs', 'list', '--status', 'success', '--task', 'work']);
    expect(human.code).toBe(0);
    const lines = human.out.trim().split('\n');
    expect(lines[0]).toMatch(/^RUN\s+STATUS\s+REASON\s+TASK\s+PAGE\s+ATTEMPT\s+AGE\s+REVISION$/);
    expect(lines).toHaveLength(4);
    expect(lines[1]?.indexOf('success')).toBe(lines[0]?.indexOf('STATUS'));
    expect(human.out).not.toContain('\u001b['); // no colour when output is not a terminal
  });

  it('gets a run with its callbacks and its history, as the API does', async () => {
    expect(await json(['runs', 'get', ids.failed])).toEqual(
      JSON.parse(JSON.stringify(await api.operator.runs.get(ids.failed))),
    );
    expect((await json(['runs', 'get', ids.failed])).callbacks).toEqual({ pending: 0, delivered: 0, deadLetters: 1 });
    expect(await json(['runs', 'history', ids.done[0] as string])).toEqual(
      await api.operator.runs.history(ids.done[0] as string),
    );
    const human = await docket(['--db', db, 'runs', 'history', ids.failed]);
    expect(human.out).toMatch(/ATTEMPTS_EXHAUSTED/);
    const missing = await docket(['--db', db, 'runs', 'get', 'a'.repeat(32)]);
    expect(missing.code).toBe(1);
    const malformed = await docket(['--db', db, 'runs', 'get', 'nope']);
    expect(malformed).toMatchObject({ code: 1 });
    expect(malformed.err).toMatch(/^JSON_INVALID: /);
  });

  it('pauses, resumes and cancels; a stale --expected-revision is REVISION_CONFLICT with exit 1', async () => {
    const runId = ids.idle[0] as string;
    const paused = await json(['runs', 'pause', runId, '--reason', 'investigating']);
    expect(paused).toMatchObject({ kind: 'applied', status: 'paused', revision: 2 });
    // The same shell command again is safe: the generated command id returns the first result.
    expect(await json(['runs', 'pause', runId, '--reason', 'investigating', '--expected-revision', '1'])).toEqual(
      paused,
    );
    const stale = await docket(['--db', db, 'runs', 'resume', runId, '--reason', 'go', '--expected-revision', '1']);
    expect(stale.code).toBe(1);
    expect(stale.err).toMatch(/^REVISION_CONFLICT: /);
    expect(await json(['runs', 'resume', runId, '--reason', 'go'])).toMatchObject({
      kind: 'applied',
      status: 'pending',
    });
    const human = await docket([
      '--db',
      db,
      'runs',
      'cancel',
      runId,
      '--reason',
      'wrong release',
      '--command-id',
      'ticket-42',
    ]);
    expect(human).toMatchObject({ code: 0 });
    expect(human.out).toMatch(/applied: run \w+ is cancelled/);
    const history = await api.operator.runs.history(runId);
    expect(history.at(-1)).toMatchObject({
      reason: 'OPERATOR_STOP',
      actor: 'operator',
      detail: { reason: 'wrong release' },
    });
  });

  it('lists and replays dead letters', async () => {
    const listed = await json(['dead-letters', 'list']);
    expect(listed).toEqual(JSON.parse(JSON.stringify(await api.operator.deadLetters.list())));
    expect(listed.items).toHaveLength(1);
    const eventId = listed.items[0].eventId as string;
    expect(eventId).toBe(`${ids.failed}:1:failure`);
    // No --reason: the replay records a default one.
    expect(await json(['dead-letters', 'replay', eventId])).toMatchObject({ kind: 'applied', status: 'pending' });
    expect((await json(['dead-letters', 'list'])).items).toEqual([]);
  });

  it('retries a failed run (OPERATOR_RETRY) and leaves any other run as it is', async () => {
    const noReason = await docket(['--db', db, 'runs', 'retry', ids.failed]);
    expect(noReason).toMatchObject({ code: 2 });
    expect(noReason.err).toMatch(/needs --reason/);
    const before = await json(['runs', 'get', ids.failed]);
    const retried = await json(['runs', 'retry', ids.failed, '--reason', 'input fixed']);
    expect(retried).toMatchObject({ kind: 'applied', status: 'pending', revision: before.revision + 1, changed: true });
    const history = await api.operator.runs.history(ids.failed);
    expect(history.at(-1)).toMatchObject({
      from: 'failed',
      to: 'pending',
      reason: 'OPERATOR_RETRY',
      actor: 'operator',
      detail: { reason: 'input fixed' },
    });
    expect(await json(['runs', 'get', ids.failed])).toMatchObject({ page: 1, attempt: 1, status: 'pending' });
    const done = ids.done[1] as string;
    expect(await json(['runs', 'retry', done, '--reason', 'again'])).toMatchObject({ kind: 'noop', status: 'success' });
  });

  it('lists, pauses and resumes schedules', async () => {
    const producer = createQueue({ store: sqliteStore({ filename: db }), runtime: { mode: 'producer' } });
    const idle = producer.define({ name: 'idle', version: '1' });
    await producer.ready();
    try {
      await idle.schedule('nightly', { cron: '0 2 * * *', timezone: 'Europe/Berlin', query: 'n' });
    } finally {
      await producer.close();
    }
    const listed = await json(['schedules', 'list']);
    expect(listed).toEqual(JSON.parse(JSON.stringify(await api.operator.schedules.list())));
    expect(listed.items).toMatchObject([{ id: 'nightly', enabled: true, revision: 1, timezone: 'Europe/Berlin' }]);
    const human = await docket(['--db', db, 'schedules', 'list']);
    expect(human.out).toMatch(/^SCHEDULE\s+TASK\s+CRON\s+ZONE\s+STATE/);
    expect(human.out).toMatch(/nightly\s+idle\s+0 2 \* \* \*\s+Europe\/Berlin\s+enabled/);
    expect(await docket(['--db', db, 'schedules', 'pause', 'nightly'])).toMatchObject({ code: 2 });
    const paused = await json(['schedules', 'pause', 'nightly', '--reason', 'holiday']);
    expect(paused).toEqual({ kind: 'applied', id: 'nightly', revision: 2, enabled: false, changed: true });
    expect(await json(['schedules', 'pause', 'nightly', '--reason', 'holiday', '--expected-revision', '1'])).toEqual(
      paused,
    );
    expect(await json(['schedules', 'resume', 'nightly', '--reason', 'back'])).toMatchObject({
      kind: 'applied',
      enabled: true,
    });
    const missing = await docket(['--db', db, 'schedules', 'resume', 'nope', '--reason', 'x']);
    expect(missing).toMatchObject({ code: 1 });
  });

  it('treats a lone -- as the end of options (POSIX), and says so when a flag comes after it', async () => {
    expect((await docket(['--db', db, '--json', '--', 'runs', 'list'])).code).toBe(0);
    const flag = await docket(['--db', db, 'runs', 'list', '--', '--status', 'failed']);
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/runs list takes no arguments \(--status came after a lone --, which ends the options\)/);
  });

  it("refuses every write command on a file that is not Docket's without changing a byte of it", async () => {
    const appFile = join(dir, 'app-rollback.sqlite');
    const app = new Database(appFile);
    app.exec('CREATE TABLE notes (id TEXT PRIMARY KEY)');
    app.close();
    const empty = join(dir, 'empty.sqlite');
    writeFileSync(empty, '');
    const id = '0'.repeat(32);
    const writes = [
      ['gc'],
      ['runs', 'cancel', id, '--reason', 'x'],
      ['runs', 'retry', id, '--reason', 'x'],
      ['schedules', 'pause', 'nightly', '--reason', 'x'],
      ['dead-letters', 'replay', `${id}:1:success`],
    ];
    for (const file of [appFile, empty]) {
      const before = readFileSync(file);
      for (const args of writes) {
        const result = await docket(['--db', file, ...args]);
        expect(result.code, args.join(' ')).toBe(1);
        expect(result.err, args.join(' ')).toMatch(/^SCHEMA_MISMATCH: /);
        expect(readFileSync(file).equals(before), `${args.join(' ')} changed ${file}`).toBe(true);
        expect(existsSync(`${file}-wal`), `${args.join(' ')} left a WAL beside ${file}`).toBe(false);
      }
    }
  });

  it('refuses to write into a file without Docket tables; docket migrate [--dry-run] is the one command that adds them', async () => {
    const plain = join(dir, 'plain.sqlite');
    const app = new Database(plain);
    app.exec('CREATE TABLE orders (id TEXT PRIMARY KEY)');
    app.close();
    const tables = () => {
      const db = new Database(plain, { readonly: true });
      const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
      db.close();
      return names.map((t) => (t as { name: string }).name);
    };
    const gc = await docket(['--db', plain, 'gc']);
    expect(gc.code).toBe(1);
    expect(gc.err).toMatch(/^SCHEMA_MISMATCH: .*docket migrate/);
    expect(tables()).toEqual(['orders']);
    const dry = await docket(['--db', plain, 'migrate', '--dry-run']);
    expect(dry).toMatchObject({ code: 0 });
    expect(dry.out).toMatch(/^would migrate .*plain\.sqlite: this file is not a Docket database/);
    expect(tables()).toEqual(['orders']);
    expect((await docket(['--db', plain, 'migrate'])).out).toMatch(/^migrated /);
    expect(tables()).toContain('docket_runs');
    expect((await docket(['--db', plain, '--json', 'migrate'])).out).toContain('"upToDate": true');
    expect(await docket(['--db', plain, 'gc'])).toMatchObject({ code: 0 });
  });

  it('prints stats as operator.stats() answers them, for all tasks or one', async () => {
    const same = (value: { at?: string; oldestDueAgeMs?: number | null }) => ({
      ...value,
      at: 'now',
      oldestDueAgeMs: value.oldestDueAgeMs === null ? null : 'some',
    });
    expect(same(await json(['stats']))).toEqual(same(await api.operator.stats()));
    const work = await json(['stats', '--task', 'work']);
    expect(work.byTask.map((t: { name: string }) => t.name)).toEqual(['work']);
    expect(work.byStatus.success).toBe(3);
    expect(same(work)).toEqual(same(await api.operator.stats({ taskName: 'work' })));
    const text = (await docket(['--db', db, 'stats'])).out;
    expect(text).toMatch(/^TASK\s+VERSION\s+/);
    expect(text).toMatch(/^work\s+1\s+/m);
    expect(text).toMatch(/^dead letters: \d+$/m);
    expect(await docket(['--db', db, 'stats', '--task', ''])).toMatchObject({ code: 1 });
    expect(await docket(['--db', db, 'stats', '--limit', '3'])).toMatchObject({ code: 2 });
  });

  it('runs gc and health', async () => {
    expect(await json(['gc'])).toEqual({ runs: 0, events: 0, deadLetters: 0 });
    expect(await json(['health'])).toEqual({ status: 'ready', reasons: [] });
    expect((await docket(['--db', db, 'health'])).out.trim()).toBe('ready');
  });
});

describe('docket usage and files', () => {
  it('prints its version with --version and exits 0', async () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    const result = binary(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(manifest.version);
  });

  // Several CLI processes one after another: each may take seconds to start on a loaded machine.
  it('the built binary exits with what the command answers: 1 for a missing run or with the error code on stderr, 2 with the usage', {
    timeout: 120_000,
  }, () => {
    const missing = binary(['--db', db, 'runs', 'get', 'a'.repeat(32)]);
    expect(missing.status).toBe(1);
    expect(missing.stdout.trim()).toBe(`no run ${'a'.repeat(32)}`);
    const malformed = binary(['--db', db, 'runs', 'get', 'nope']);
    expect(malformed.status).toBe(1);
    expect(malformed.stderr).toMatch(/^JSON_INVALID: /);
    const usage = binary(['runs', 'list']);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/usage: docket/);
    const listed = binary(['--db', db, '--json', 'runs', 'list', '--limit', '1']);
    expect(listed.status, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).items).toHaveLength(1);
  });

  it.each([
    [[]],
    [['--db', 'x', 'nope']],
    [['--bogus']],
    [['--db', 'x', 'runs', 'list', '--reason', 'x']],
    [['--db', 'x', 'runs', 'get']],
    [['--db', 'x', 'runs', 'get', 'a', 'b']],
    [['--db', 'x', 'runs', 'cancel', 'a'.repeat(32)]],
    [['--db', 'x', 'runs', 'list', '--limit', 'ten']],
    [['--db', 'x', 'runs', 'list', '--status', 'sleeping']],
    [['runs', 'list']],
    [['--database-url', 'postgres://x', '--db', 'x', 'runs', 'list']],
  ])('exits 2 with a usage line for %j', async (args) => {
    const result = await docket(args);
    expect(result.code).toBe(2);
    expect(result.err).toMatch(/usage: docket/);
  });

  it('prints complete help for the command and for each subcommand', async () => {
    const help = await docket(['--help']);
    expect(help.code).toBe(0);
    for (const command of [
      'runs list',
      'runs get',
      'runs history',
      'runs cancel',
      'dead-letters replay',
      'gc',
      'health',
      'providers check',
    ]) {
      expect(help.out).toContain(command.split(' ')[0]);
      const sub = await docket([...command.split(' '), '--help']);
      expect(sub.code).toBe(0);
      expect(sub.out).toMatch(/^usage: docket/);
    }
  });

  it('never creates or changes a file it was only asked to read', async () => {
    const before = fingerprint(db);
    for (const args of [
      ['runs', 'list'],
      ['runs', 'get', ids.done[0] as string],
      ['runs', 'history', ids.failed],
      ['dead-letters', 'list'],
      ['health'],
    ]) {
      expect((await docket(['--db', db, ...args])).code).toBe(0);
    }
    expect(fingerprint(db)).toBe(before);
    const missing = join(dir, 'missing.sqlite');
    const result = await docket(['--db', missing, 'runs', 'list']);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^CONNECTION_UNAVAILABLE: /);
    expect(existsSync(missing)).toBe(false);
    const cancel = await docket(['--db', missing, 'runs', 'cancel', 'a'.repeat(32), '--reason', 'x']);
    expect(cancel.code).toBe(1);
    expect(existsSync(missing)).toBe(false);
  });

  it('refuses a file that is not a Docket database without changing it', async () => {
    const other = join(dir, 'other.sqlite');
    spawnSync(process.execPath, [
      '-e',
      `const D=require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))});new D(${JSON.stringify(other)}).exec('CREATE TABLE t(x)')`,
    ]);
    const before = fingerprint(other);
    const result = await docket(['--db', other, 'runs', 'list']);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^SCHEMA_MISMATCH: /);
    expect(fingerprint(other)).toBe(before);
  });
});
