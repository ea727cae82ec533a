import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue } from '@docket/core';
import { type LocalModel, startLocalModel } from '@docket/provider-http/testing';
import { sqliteStore } from '@docket/store-sqlite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type FlowOptions,
  type FlowOutput,
  openAppStore,
  paths,
  runEventTriggered,
  runSafeStop,
  runScheduled,
  runStateCheck,
  runStatusTracking,
  writeInboxEvent,
} from '../src/lifecycle/index.js';

const CLI = fileURLToPath(new URL('../dist/lifecycle/cli.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'docket-lifecycle-'));
const report: Record<string, unknown>[] = [];
let local: LocalModel;
let scenario = '';
/** Every Docket log line (JSON with `name: "docket"`) the CLI processes of these scenarios wrote on stderr. */
const docketLogLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  local = await startLocalModel({ slowMs: 1500 });
});
afterEach(() => {
  local.fail(null);
});
afterAll(async () => {
  await local.close();
  // A log line never carries a run's query, state or event payload (`logPayloads` is off in the examples).
  for (const line of docketLogLines) {
    expect(Object.keys(line)).not.toEqual(expect.arrayContaining(['query']));
    expect(Object.keys(line)).not.toEqual(expect.arrayContaining(['state']));
    expect(Object.keys(line)).not.toEqual(expect.arrayContaining(['payload']));
  }
  // The package experiment runs this file from the installed tarballs and names a report file of its own.
  const reportDir = fileURLToPath(new URL('../../../.examples-lifecycle-tasks/', import.meta.url));
  const file = process.env.DOCKET_LIFECYCLE_REPORT ?? join(reportDir, '.examples-lifecycle-tasks-live-results.json');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ finishedAt: new Date().toISOString(), scenarios: report }, null, 2)}\n`);
  process.stdout.write(`lifecycle scenario report: ${file}\n`);
});

const base = (): FlowOptions => ({ root, cwd: root, localModel: local });

/** Runs `fn`, records the final run in the report, and returns the output and the model calls it made. */
async function measured(name: string, fn: () => Promise<FlowOutput>) {
  scenario = name;
  const before = local.requestCount;
  const output = await fn();
  const calls = local.requestCount - before;
  const notices = openAppStore(paths(output.directory).database);
  const count = notices.noticeCount();
  notices.close();
  report.push({
    scenario: name,
    directory: output.directory,
    status: output.result.job.status,
    reason: output.result.job.reason,
    modelCalls: calls,
    reservedModelCalls: output.result.job.limits.modelCalls.used,
    notices: count,
  });
  return { output, calls, notices: count };
}

/**
 * Checks the run's final status and reason, then that results/task.json holds exactly the run and history a new
 * process reads back from the task directory's database (a store opened afresh, not the object the flow wrote).
 */
async function expectRun(output: FlowOutput, status: string, reason: string) {
  expect({ status: output.result.job.status, reason: output.result.job.reason }, scenario).toEqual({ status, reason });
  const written = JSON.parse(readFileSync(paths(output.directory).result, 'utf8')) as FlowOutput['result'];
  const stored = await readBack(paths(output.directory).database, output.result.job.runId);
  expect({ job: written.job, history: written.history }, scenario).toEqual(stored);
}

/** Reads a run and its history in a new process, through the operator API of a producer queue opened afresh. */
const READ_BACK = `
const queue = createQueue({ store: sqliteStore({ filename: arg[0], readonly: true }), runtime: { mode: 'producer' } });
await queue.ready();
const job = await queue.operator.runs.get(arg[1]);
const history = await queue.operator.runs.history(arg[1]);
await queue.close();
out({ job, history });
`;

/** Delivers an event to a run in a new process, as an independent producer would, and answers its `DeliverResult`. */
const DELIVER = `
const queue = createQueue({ store: sqliteStore({ filename: arg[0] }), runtime: { mode: 'producer' } });
await queue.ready();
const result = await queue.events.deliver(arg[1], JSON.parse(arg[2]));
await queue.close();
out(result);
`;

const readBack = (database: string, runId: string) => inNewProcess(READ_BACK, [database, runId]);

/** The `DeliverResult` of delivering the task directory's event (as the flow sends it) from another process. */
function deliverFrom(output: FlowOutput): Promise<{ accepted: boolean; duplicate: boolean; status: string | null }> {
  const { id, type, taskId, releaseId, revision } = inboxEventFor(output);
  const event = JSON.stringify({ id, type, payload: { taskId, releaseId, revision } });
  return inNewProcess(DELIVER, [paths(output.directory).database, output.result.job.runId, event]) as never;
}

/** Runs `body` as an ES module in a new Node.js process with the workspace's (or the tarballs') Docket packages. */
function inNewProcess(body: string, args: string[]): Promise<unknown> {
  const script = `import { createQueue } from '@docket/core';
import { sqliteStore } from '@docket/store-sqlite';
const arg = process.argv.slice(1);
const out = (value) => process.stdout.write(JSON.stringify(value));
${body}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, ...args], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  return new Promise((resolve, reject) =>
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`new process exited ${code}`)),
    ),
  );
}

/** The flags and environment that point a CLI process at the test's own local model (provider `shared`). */
const SHARED = ['--provider', 'shared'];
const SHARED_ENV = () => ({
  ...process.env,
  DOCKET_PROVIDER_SHARED_KIND: 'openai-compatible',
  DOCKET_PROVIDER_SHARED_BASE_URL: local.baseUrl,
  DOCKET_PROVIDER_SHARED_MODEL: 'local',
});

function cli(
  args: string[],
  cwd = root,
  env: NodeJS.ProcessEnv = process.env,
): { child: ChildProcess; done: Promise<{ code: number | null; out: string; err: string }> } {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c) => {
    out += c;
  });
  child.stderr?.on('data', (c) => {
    err += c;
  });
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
    child.on('exit', (code) => {
      docketLogLines.push(...docketLines(err));
      resolve({ code, out, err });
    }),
  );
  return { child, done };
}

/** The lines of a process's stderr that are Docket's JSON log lines. */
function docketLines(stderr: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const text of stderr.split('\n')) {
    if (!text.startsWith('{')) continue;
    try {
      const line = JSON.parse(text) as Record<string, unknown>;
      if (line.name === 'docket') lines.push(line);
    } catch {
      // Not a log line.
    }
  }
  return lines;
}

async function untilRequests(count: number) {
  await expect.poll(() => local.requestCount, { timeout: 5000, interval: 5 }).toBeGreaterThanOrEqual(count);
}

/** Another process's view of a task directory: a producer queue on its lifecycle.sqlite. */
async function controller(directory: string) {
  const queue = createQueue({
    store: sqliteStore({ filename: paths(directory).database }),
    runtime: { mode: 'producer' },
  });
  const task = queue.define({
    name: 'release-notice',
    version: '1',
    policy: { attempts: 1, timeoutMs: 120_000 },
    recovery: 'manual',
  });
  await queue.ready();
  return { queue, task };
}

function bumpRevision(directory: string, releaseId: string) {
  const app = openAppStore(paths(directory).database);
  app.bumpRevision(releaseId);
  app.close();
}

// Each scenario starts CLI processes one after another: each may take seconds to start on a loaded machine.
describe('lifecycle scenarios (local model over real HTTP)', { timeout: 120_000 }, () => {
  it('01 tracked task and idempotent re-entry', async () => {
    const first = await measured('01 tracked task', () => runStatusTracking(base()));
    await expectRun(first.output, 'success', 'COMPLETED');
    expect([first.calls, first.notices]).toEqual([1, 1]);
    expect(first.output.provider).toBe('local');
    const again = await measured('01 re-entry', () =>
      runStatusTracking({ ...base(), directory: first.output.directory }),
    );
    await expectRun(again.output, 'success', 'COMPLETED');
    expect([again.calls, again.notices]).toEqual([0, 1]);
  });

  it('02 blocked until ready', async () => {
    const blocked = await measured('02 blocked', () => runStateCheck(base()));
    await expectRun(blocked.output, 'blocked', 'BUSINESS_STATE');
    expect([blocked.calls, blocked.notices]).toEqual([0, 0]);
    const ready = await measured('02 ready', () =>
      runStateCheck({ ...base(), directory: blocked.output.directory, ready: true }),
    );
    await expectRun(ready.output, 'success', 'COMPLETED');
    expect([ready.calls, ready.notices]).toEqual([1, 1]);
  });

  it('03 stale revision before work', async () => {
    // Due far enough ahead that a slow machine's first process still leaves the run waiting.
    const waiting = await runScheduled({ ...base(), dueAt: new Date(Date.now() + 2000).toISOString(), waitMs: 0 });
    expect(waiting.result.job.status).toBe('waiting');
    bumpRevision(waiting.directory, waiting.result.job.query.releaseId);
    const { output, calls, notices } = await measured('03 stale revision', () =>
      runScheduled({ ...base(), directory: waiting.directory, waitMs: 6000 }),
    );
    await expectRun(output, 'blocked', 'BUSINESS_STATE');
    expect([calls, notices]).toEqual([0, 0]);
  });

  it('04 business change during inference', async () => {
    local.fail('slow', 1);
    const before = local.requestCount;
    const pending = measured('04 business change', () => runStatusTracking(base()));
    await untilRequests(before + 1);
    const directory = findNewest('tracking');
    bumpRevision(directory, JSON.parse(readFileSync(paths(directory).source, 'utf8')).release.id);
    const { output, calls, notices } = await pending;
    await expectRun(output, 'blocked', 'BUSINESS_CHANGED');
    expect([calls, notices]).toEqual([1, 0]);
  });

  it('04 business change during inference: the release withdrawn, not only revised', async () => {
    local.fail('slow', 1);
    const before = local.requestCount;
    const pending = measured('04 release withdrawn', () => runStatusTracking(base()));
    await untilRequests(before + 1);
    const directory = findNewest('tracking');
    const app = openAppStore(paths(directory).database);
    app.setReleaseStatus(JSON.parse(readFileSync(paths(directory).source, 'utf8')).release.id, 'withdrawn');
    app.close();
    const { output, calls, notices } = await pending;
    await expectRun(output, 'blocked', 'BUSINESS_CHANGED');
    expect([calls, notices]).toEqual([1, 0]);
    expect(output.result.release?.status).toBe('withdrawn');
  });

  it('05 budget stop', async () => {
    const { output, calls, notices } = await measured('05 budget stop', () => runSafeStop(base()));
    await expectRun(output, 'cancelled', 'MODEL_CALL_BUDGET');
    expect([calls, notices]).toEqual([0, 0]);
  });

  it('06 expired deadline', async () => {
    const { output, calls, notices } = await measured('06 expired deadline', () =>
      runSafeStop({ ...base(), modelCallBudget: 1, deadlineMs: 1 }),
    );
    await expectRun(output, 'cancelled', 'DEADLINE');
    expect([calls, notices]).toEqual([0, 0]);
  });

  it('07 cancel before work', async () => {
    const waiting = await runScheduled({ ...base(), dueAt: new Date(Date.now() + 60_000).toISOString(), waitMs: 0 });
    const { queue, task } = await controller(waiting.directory);
    expect(await task.cancel(waiting.result.job.runId)).toMatchObject({ status: 'cancelled', changed: true });
    await queue.close();
    const { output, calls, notices } = await measured('07 cancel before work', () =>
      runScheduled({ ...base(), directory: waiting.directory, waitMs: 0 }),
    );
    await expectRun(output, 'cancelled', 'CANCELLED');
    expect([calls, notices]).toEqual([0, 0]);
  });

  it('08 cancel in flight', async () => {
    local.fail('slow', 1);
    const aborter = new AbortController();
    const before = local.requestCount;
    const abortedBefore = local.abortedConnections;
    const pending = measured('08 cancel in flight', () => runStatusTracking({ ...base(), signal: aborter.signal }));
    await untilRequests(before + 1);
    aborter.abort();
    const { output, calls, notices } = await pending;
    await expectRun(output, 'cancelled', 'CALLER_CANCELLED');
    expect([calls, notices]).toEqual([1, 0]);
    // This scenario's own request was cut off: one more aborted connection than before it.
    await expect.poll(() => local.abortedConnections - abortedBefore, { timeout: 3000 }).toBe(1);
  });

  it('09 operator stop after inference', async () => {
    local.fail('slow', 1);
    const before = local.requestCount;
    const pending = measured('09 operator stop', () => runStatusTracking(base()));
    await untilRequests(before + 1);
    const directory = findNewest('tracking');
    const { queue, task } = await controller(directory);
    const runId = JSON.parse(readFileSync(paths(directory).application, 'utf8')).runId as string;
    const current = await task.get(runId);
    await queue.operator.runs.cancel({
      runId,
      expectedRevision: current!.revision,
      reason: 'withdrawn',
      commandId: 'op-09',
    });
    await queue.close();
    const { output, calls, notices } = await pending;
    await expectRun(output, 'cancelled', 'OPERATOR_STOP');
    expect([calls, notices]).toEqual([1, 0]);
  });

  it('10 deadline in flight', async () => {
    local.fail('slow', 1);
    const { output, calls, notices } = await measured('10 deadline in flight', () =>
      runSafeStop({ ...base(), modelCallBudget: 1, deadlineMs: 700 }),
    );
    await expectRun(output, 'cancelled', 'DEADLINE');
    expect([calls, notices]).toEqual([1, 0]);
  });

  it('11 scheduled, no early execution', async () => {
    const dueAt = new Date(Date.now() + 2500);
    const early = await measured('11 before due', () =>
      runScheduled({ ...base(), dueAt: dueAt.toISOString(), waitMs: 200 }),
    );
    await expectRun(early.output, 'waiting', 'STARTED');
    expect(early.calls).toBe(0);
    const due = await measured('11 after due', () =>
      runScheduled({ ...base(), directory: early.output.directory, waitMs: 5000 }),
    );
    await expectRun(due.output, 'success', 'COMPLETED');
    expect([due.calls, due.notices]).toEqual([1, 1]);
    const fired = due.output.result.history.find((e) => e.reason === 'TIME_REACHED');
    expect(Date.parse(fired!.at)).toBeGreaterThanOrEqual(dueAt.getTime());
  });

  // The CLI may be started again with a longer lead (`scheduledBeforeDue`), and the restart waits until the run is due.
  it('12 scheduled, process killed (SIGKILL) and restarted', { timeout: 120_000 }, async () => {
    const { child, done, directory, dueAt } = await scheduledBeforeDue();
    child.kill('SIGKILL');
    expect((await done).code).toBeNull();
    const { output, calls, notices } = await measured('12 restarted after SIGKILL', () =>
      runScheduled({ ...base(), directory, waitMs: untilDueAnd(dueAt, 10_000) }),
    );
    await expectRun(output, 'success', 'COMPLETED');
    expect([calls, notices]).toEqual([1, 1]);
  });

  it('12b scheduled, consumer stopped by SIGTERM while it waits: the run stays waiting and a restart runs it', {
    timeout: 120_000,
  }, async () => {
    const { child, done, directory, dueAt } = await scheduledBeforeDue();
    await new Promise((resolve) => setTimeout(resolve, 500));
    child.kill('SIGTERM');
    const stopped = await done;
    expect(stopped.code).toBe(0);
    const { output, calls, notices } = await measured('12b restarted after SIGTERM', () =>
      runScheduled({ ...base(), directory, waitMs: untilDueAnd(dueAt, 10_000) }),
    );
    await expectRun(output, 'success', 'COMPLETED');
    expect([calls, notices]).toEqual([1, 1]);
    expect(output.result.history.map((e) => e.reason)).not.toContain('CALLER_CANCELLED');
  });

  it('13 event file written by an independent process', async () => {
    const waiting = await runEventTriggered(base());
    const pending = measured('13 independent producer', () =>
      runEventTriggered({ ...base(), directory: waiting.directory, waitMs: 10_000 }),
    );
    const event = inboxEventFor(waiting);
    const producer = spawn(
      process.execPath,
      [
        '-e',
        `const fs=require('fs');const p=process.argv[1];fs.writeFileSync(p+'.tmp',process.argv[2]);fs.renameSync(p+'.tmp',p);`,
        paths(waiting.directory).inbox,
        JSON.stringify(event),
      ],
      { stdio: 'ignore' },
    );
    await new Promise((resolve) => producer.on('exit', resolve));
    const { output, calls, notices } = await pending;
    await expectRun(output, 'success', 'COMPLETED');
    expect([calls, notices]).toEqual([1, 1]);
  });

  it('14 event, process restarted; 15 duplicate event and re-entry', async () => {
    // The first consumer is a process of its own: it starts the run, finds it waiting, and exits.
    const first = await cli(['event', '--wait-ms', '0']).done;
    expect(first.code).toBe(0);
    const waiting = JSON.parse(first.out) as FlowOutput;
    await expectRun(waiting, 'waiting', 'STARTED');
    writeInboxEvent(waiting.directory, inboxEventFor(waiting));
    // The restarted consumer is a new process too, asking the test's one local model.
    const before = local.requestCount;
    const restarted = await cli(
      ['event', '--directory', waiting.directory, '--wait-ms', '5000', ...SHARED],
      root,
      SHARED_ENV(),
    ).done;
    expect(restarted.code, restarted.err).toBe(0);
    const output = JSON.parse(restarted.out) as FlowOutput;
    await expectRun(output, 'success', 'COMPLETED');
    expect(local.requestCount - before).toBe(1);
    report.push({ scenario: '14 event after restart', status: output.result.job.status, modelCalls: 1 });
    // 15: the same event again, from a separate producer process: a duplicate, and nothing runs.
    const duplicate = await deliverFrom(output);
    expect(duplicate).toEqual({ accepted: false, duplicate: true, status: 'success' });
    const reentry = await measured('15 duplicate event and re-entry', () =>
      runEventTriggered({ ...base(), directory: waiting.directory, waitMs: 200 }),
    );
    await expectRun(reentry.output, 'success', 'COMPLETED');
    expect([reentry.calls, reentry.notices]).toEqual([0, 1]);
    expect(local.requestCount - before).toBe(1);
  });

  it('16 invalid event scope', async () => {
    const waiting = await runEventTriggered(base());
    writeInboxEvent(waiting.directory, { ...inboxEventFor(waiting), revision: 99 });
    const { output, calls, notices } = await measured('16 invalid event scope', () =>
      runEventTriggered({ ...base(), directory: waiting.directory, waitMs: 2000 }),
    );
    await expectRun(output, 'failed', 'TRIGGER_INVALID');
    expect([calls, notices]).toEqual([0, 0]);
  });

  it("16 invalid event scope delivered by a producer without the task's handlers fails the run too", async () => {
    const waiting = await runEventTriggered(base());
    const { id, type, taskId, releaseId } = inboxEventFor(waiting);
    const event = JSON.stringify({ id, type, payload: { taskId, releaseId, revision: 99 } });
    const result = await inNewProcess(DELIVER, [paths(waiting.directory).database, waiting.result.job.runId, event]);
    expect(result).toEqual({ accepted: false, duplicate: false, status: 'failed' });
    const { job } = (await readBack(paths(waiting.directory).database, waiting.result.job.runId)) as {
      job: { status: string; reason: string };
    };
    expect(job).toMatchObject({ status: 'failed', reason: 'TRIGGER_INVALID' });
  });

  it('16 invalid event: a wrong type, a wrong shape, a bad id, invalid JSON or a file over 16 KiB fails the run too', async () => {
    const cases: [string, string, RegExp][] = [
      [
        'wrong type',
        JSON.stringify({ id: 'e', type: 'release.cancelled', taskId: 't', releaseId: 'r', revision: 1 }),
        /type is "release.cancelled"/,
      ],
      ['wrong shape', JSON.stringify({ id: 'e', type: 'release.ready', taskId: 7 }), /no string taskId/],
      ['invalid JSON', '{"id": "e", "type": ', /not JSON/],
      ['over 16 KiB', JSON.stringify({ id: 'e', type: 'release.ready', pad: 'x'.repeat(17_000) }), /over 16384/],
      [
        'an empty id',
        JSON.stringify({ id: '', type: 'release.ready', taskId: 't', releaseId: 'r', revision: 1 }),
        /id of 1 to 256 bytes/,
      ],
      [
        'an id over 256 bytes',
        JSON.stringify({ id: 'e'.repeat(257), type: 'release.ready', taskId: 't', releaseId: 'r', revision: 1 }),
        /id of 1 to 256 bytes/,
      ],
    ];
    for (const [name, text, detail] of cases) {
      const waiting = await runEventTriggered(base());
      writeFileSync(paths(waiting.directory).inbox, text);
      const { output, calls, notices } = await measured(`16 invalid event: ${name}`, () =>
        runEventTriggered({ ...base(), directory: waiting.directory, waitMs: 2000 }),
      );
      await expectRun(output, 'failed', 'TRIGGER_INVALID');
      expect([calls, notices], name).toEqual([0, 0]);
      const last = output.result.history.at(-1);
      expect(last, name).toMatchObject({ from: 'waiting', to: 'failed', reason: 'TRIGGER_INVALID' });
      expect((last?.detail as { reason?: string } | undefined)?.reason, name).toMatch(detail);
    }
  });

  it('17 cancel a waiting trigger', async () => {
    const waiting = await runEventTriggered(base());
    const stopped = await measured('17 cancel a waiting trigger', () =>
      runEventTriggered({ ...base(), directory: waiting.directory, stop: true }),
    );
    await expectRun(stopped.output, 'cancelled', 'OPERATOR_STOP');
    // The late event reaches events.deliver from a separate producer process: not accepted, nothing runs.
    const before = local.requestCount;
    expect(await deliverFrom(stopped.output)).toEqual({ accepted: false, duplicate: false, status: 'cancelled' });
    writeInboxEvent(waiting.directory, inboxEventFor(waiting));
    const after = await measured('17 event after the stop', () =>
      runEventTriggered({ ...base(), directory: waiting.directory, waitMs: 300 }),
    );
    await expectRun(after.output, 'cancelled', 'OPERATOR_STOP');
    expect([stopped.calls + after.calls, after.notices]).toEqual([0, 0]);
    expect(local.requestCount).toBe(before);
  });

  it('18 concurrent runners, one claim', async () => {
    const waiting = await runEventTriggered(base());
    writeInboxEvent(waiting.directory, inboxEventFor(waiting));
    const before = local.requestCount;
    const runners = [0, 1, 2].map(() =>
      cli(['event', '--directory', waiting.directory, '--wait-ms', '5000', ...SHARED], root, SHARED_ENV()),
    );
    const results = await Promise.all(runners.map((r) => r.done));
    expect(results.map((r) => r.code)).toEqual([0, 0, 0]);
    // One request in all at the one local model the three processes share.
    expect(local.requestCount - before).toBe(1);
    // Every runner, winner or not, reports the one run with one claim, and never a second notice.
    for (const result of results) {
      const seen = JSON.parse(result.out) as FlowOutput;
      expect(seen.result.job.runId).toBe(waiting.result.job.runId);
      expect(['running', 'success']).toContain(seen.result.job.status);
      expect(seen.result.history.filter((e) => e.reason === 'CLAIMED').length).toBeLessThanOrEqual(1);
    }
    const final = await runEventTriggered({ ...base(), directory: waiting.directory });
    const claims = final.result.history.filter((e) => e.reason === 'CLAIMED');
    report.push({
      scenario: '18 concurrent runners',
      status: final.result.job.status,
      claims: claims.length,
      reservedModelCalls: final.result.job.limits.modelCalls.used,
    });
    await expectRun(final, 'success', 'COMPLETED');
    expect(claims).toHaveLength(1);
    expect(final.result.job.limits.modelCalls.used).toBe(1);
    const app = openAppStore(paths(waiting.directory).database);
    expect(app.noticeCount()).toBe(1);
    app.close();
  });

  it('19 actual storage write failure', async () => {
    const waiting = await runScheduled({ ...base(), dueAt: new Date(Date.now() + 2000).toISOString(), waitMs: 0 });
    expect(waiting.result.job.status).toBe('waiting');
    const app = openAppStore(paths(waiting.directory).database);
    app.database.exec(
      "CREATE TRIGGER no_notices BEFORE INSERT ON notices BEGIN SELECT RAISE(ABORT, 'notices are frozen'); END",
    );
    app.close();
    const { output, calls, notices } = await measured('19 storage write failure', () =>
      runScheduled({ ...base(), directory: waiting.directory, waitMs: 6000 }),
    );
    await expectRun(output, 'failed', 'ATTEMPTS_EXHAUSTED');
    expect(output.result.job.error?.message).toContain('notices are frozen');
    expect([calls, notices]).toEqual([1, 0]);
  });

  it('20 cancel after commit keeps the effect', async () => {
    const done = await runStatusTracking(base());
    const { queue, task } = await controller(done.directory);
    expect(await task.cancel(done.result.job.runId)).toMatchObject({ status: 'success', changed: false });
    await queue.close();
    const { output, calls, notices } = await measured('20 cancel after commit', () =>
      runStatusTracking({ ...base(), directory: done.directory }),
    );
    await expectRun(output, 'success', 'COMPLETED');
    expect([calls, notices]).toEqual([0, 1]);
  });
});

describe('offline model failures', () => {
  for (const [mode, code] of [
    ['http500', 'PROVIDER_HTTP_ERROR'],
    ['bad-content', 'PROVIDER_INVALID_RESPONSE'],
    ['truncated', 'PROVIDER_TRUNCATED'],
  ] as const) {
    it(`fails the run when the model ${mode === 'http500' ? 'throws' : mode === 'bad-content' ? 'returns invalid JSON' : 'returns a truncated answer'}`, async () => {
      local.fail(mode, 1);
      const { output, calls, notices } = await measured(`offline ${mode}`, () => runStatusTracking(base()));
      await expectRun(output, 'failed', 'ATTEMPTS_EXHAUSTED');
      expect(output.result.job.error?.code).toBe(code);
      expect([calls, notices]).toEqual([1, 0]);
    });
  }
});

function inboxEventFor(output: FlowOutput) {
  const job = output.result.job;
  return {
    id: `evt-${job.query.taskId}`,
    type: 'release.ready' as const,
    taskId: job.query.taskId,
    releaseId: job.query.releaseId,
    revision: job.query.revision,
  };
}

/** The newest task directory of a flow under the shared root. */
function findNewest(flow: string): string {
  const dirs = readdirSync(root)
    .filter((name) => name.startsWith(`${flow}-`))
    .map((name) => join(root, name))
    .sort((a, b) => statSync(b).ctimeMs - statSync(a).ctimeMs);
  return dirs[0] as string;
}

/**
 * Starts the CLI's scheduled flow with its run due `leadMs` ahead (its directories under
 * <cwd>/.examples-lifecycle-tasks, as a user's run makes them) and waits for the run to be started. A CLI so slow to
 * start on a loaded machine that the run is due within 1.5 s is killed and started again with twice the lead: the
 * scenarios stop it before the run is due.
 */
async function scheduledBeforeDue(leadMs = 4000) {
  const cliRoot = join(root, '.examples-lifecycle-tasks');
  mkdirSync(cliRoot, { recursive: true });
  for (let lead = leadMs; ; lead *= 2) {
    const dueAt = Date.now() + lead;
    const before = new Set(readdirSync(cliRoot));
    const { child, done } = cli(['scheduled', '--due-at', new Date(dueAt).toISOString(), '--wait-ms', '20000']);
    const directory = await waitForDirectory(cliRoot, 'scheduled', child, before);
    if (Date.now() < dueAt - 1500 || lead >= 32_000) return { child, done, directory, dueAt };
    child.kill('SIGKILL');
    await done;
  }
}

/** How long a restarted flow waits: until `dueAt`, then `ms` more (at least `ms`). */
const untilDueAnd = (dueAt: number, ms: number) => Math.max(0, dueAt - Date.now()) + ms;

/** Waits until a child CLI has created its task directory (one not in `before`) and its run. */
async function waitForDirectory(
  parent: string,
  flow: string,
  child: ChildProcess,
  before: Set<string>,
): Promise<string> {
  let found = '';
  await expect
    .poll(
      () => {
        if (child.exitCode !== null) throw new Error('the child exited early');
        const name = readdirSync(parent).find((n) => n.startsWith(`${flow}-`) && !before.has(n));
        if (!name) return false;
        try {
          const app = JSON.parse(readFileSync(join(parent, name, 'application.json'), 'utf8'));
          if (app.runId) found = join(parent, name);
        } catch {
          return false;
        }
        return found !== '';
      },
      { timeout: 15_000, interval: 20 },
    )
    .toBe(true);
  return found;
}

process.on('exit', () => {
  if (process.env.DOCKET_KEEP_LIFECYCLE_TASKS !== '1') rmSync(root, { recursive: true, force: true });
});
