// One flow-control trial on any store: worker processes (made by the store's fixture) claim the runs a producer
// queue in this process starts, and the figures come from the stored histories (tooling/flow/figures.mjs).

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLOW_TASK, OTHER_TASK } from './app.mjs';
import { claimTimes, groupOverlap, leasesOf, overlap, startsByRun } from './figures.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check()` is true, polling; throws after `ms`. */
async function until(check, ms, what) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Every run's id and group of one task, from the operator's listing. */
async function runsOf(queue, taskName) {
  const runs = [];
  let cursor;
  do {
    const page = await queue.operator.runs.list({ taskName, limit: 200, ...(cursor ? { cursor } : {}) });
    runs.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return runs;
}

/** A worker log's lines (none while the file does not exist yet). */
function readLines(file) {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [];
}

/**
 * Waits until a worker holds leases of the limited task (runs whose last entry is its `CLAIMED`) and each of their
 * pages began (in its `log`): a lease killed before its page's start is logged would count as held by no one until
 * recovered.
 */
async function untilHolding(queue, worker, log) {
  await until(
    async () => {
      const running = (await queue.operator.runs.list({ taskName: FLOW_TASK, status: 'running' })).items;
      const held = [];
      for (const run of running) {
        const last = (await queue.operator.runs.history(run.runId)).at(-1);
        if (last?.reason === 'CLAIMED' && last.actor === `worker:${worker.id}`) held.push(run.runId);
      }
      const started = startsByRun(readLines(log));
      return held.length > 0 && held.every((runId) => started.has(runId));
    },
    20_000,
    `worker ${worker.id} to hold a lease`,
  );
}

/**
 * Runs one trial. `producer` is a ready producer queue with the trial's tasks (`defineFlowTasks`, no handlers);
 * `spawnWorker(id, log)` starts a worker process that appends `runId startMs` lines to the file `log` when a page
 * begins, and answers `{ id, proc, ready }`. Starts `runs` runs of the limited
 * task (in `groups` groups when given; `holdFirstMs`: the first asks for a task hold that long; `pageMs`: how long
 * each of their pages takes, else the application's default), `other` runs of the
 * unlimited task, optionally kills one worker holding a lease (`kill`: that worker's pages hang), waits until every run succeeded, and answers
 * the figures.
 */
export async function flowTrial({
  producer,
  tasks,
  spawnWorker,
  workers = 4,
  runs,
  groups = 0,
  other = 0,
  kill = false,
  holdFirstMs = 0,
  pause = false,
  pageMs,
}) {
  const procs = [];
  const logs = mkdtempSync(join(tmpdir(), 'docket-flow-'));
  try {
    const spawn = async (from, to) => {
      for (let i = from; i < to; i++) procs.push(spawnWorker(`w${i}`, join(logs, `w${i}.log`)));
      await Promise.all(procs.map((p) => p.ready));
    };
    // The worker to kill starts alone, so that it surely claims: a worker that settles a page claims the freed slot
    // at once, and the others could keep every slot for the whole trial. The rest start once it holds its leases.
    await spawn(0, kill ? 1 : workers);
    if (pause) await setPaused(producer, true);
    const startedAt = Date.now();
    const holdUntil = startedAt + holdFirstMs;
    const inputs = Array.from({ length: runs }, (_, i) => ({
      query: {
        i,
        ...(i === 0 && holdFirstMs > 0 ? { holdUntil } : {}),
        ...(pageMs === undefined ? {} : { pageMs }),
        // The worker to kill hangs in every page it begins, so it surely holds its leases when it dies.
        ...(kill ? { stallOn: 'w0' } : {}),
      },
      ...(groups > 0 ? { group: `g${i % groups}` } : {}),
    }));
    if (holdFirstMs > 0) {
      await tasks.limited.start(inputs[0]);
      await until(async () => (await runsOf(producer, FLOW_TASK))[0]?.reason === 'RATE_LIMITED', 20_000, 'the hold');
      inputs.shift();
    }
    for (let i = 0; i < inputs.length; i += 500) await tasks.limited.startMany(inputs.slice(i, i + 500));
    for (let i = 0; i < other; i++) await tasks.other.start({ query: { other: i } });
    const pausedClaims = pause ? await whilePaused(producer, other) : null;
    if (kill) {
      await untilHolding(producer, procs[0], join(logs, `${procs[0].id}.log`));
      await spawn(1, workers);
      procs[0].proc.kill('SIGKILL');
    }
    const total = runs + other;
    await until(
      async () => (await producer.operator.stats()).byStatus.success === total,
      120_000,
      `${total} runs to succeed`,
    );
    const lines = readdirSync(logs).flatMap((file) => readLines(join(logs, file)));
    const report = await figures(producer, startedAt, startsByRun(lines));
    return { ...report, pausedClaims, hold: report.hold && { ...report.hold, until: holdUntil } };
  } finally {
    await stopWorkers(procs);
    rmSync(logs, { recursive: true, force: true });
  }
}

/**
 * Stops the workers still running (SIGTERM: each closes its queue) and waits until they exited, so that nothing of a
 * trial still claims while its store is dropped; one that has not exited after 10 s is killed.
 */
async function stopWorkers(procs) {
  const running = procs.filter((p) => p.proc.exitCode === null && p.proc.signalCode === null);
  await Promise.all(
    running.map(
      (p) =>
        new Promise((resolve) => {
          const timer = setTimeout(() => p.proc.kill('SIGKILL'), 10_000);
          p.proc.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          p.proc.kill('SIGTERM');
        }),
    ),
  );
}

/** Pauses (or resumes) the limited task through the operator API. */
async function setPaused(queue, paused) {
  const task = (await queue.operator.tasks.list()).find((t) => t.name === FLOW_TASK);
  const command = {
    task: FLOW_TASK,
    expectedRevision: task.revision,
    reason: 'trial',
    commandId: `trial-${paused}-${task.revision}`,
  };
  await (paused ? queue.operator.tasks.pause(command) : queue.operator.tasks.resume(command));
}

/** While the task is paused: waits for every run of the other task, counts claims of the limited one, resumes. */
async function whilePaused(queue, other) {
  await until(
    async () => (await queue.operator.stats({ taskName: OTHER_TASK })).byStatus.success === other,
    60_000,
    'the other task',
  );
  await sleep(200);
  let claims = 0;
  for (const run of await runsOf(queue, FLOW_TASK)) {
    claims += (await queue.operator.runs.history(run.runId)).filter((e) => e.reason === 'CLAIMED').length;
  }
  await setPaused(queue, false);
  return claims;
}

/** The trial's figures from the histories of the limited task's runs. */
async function figures(queue, startedAt, starts) {
  const end = Date.now();
  const runs = await runsOf(queue, FLOW_TASK);
  const histories = [];
  const leases = [];
  for (const run of runs) {
    const history = await queue.operator.runs.history(run.runId);
    histories.push(history);
    leases.push(...leasesOf(history, starts.get(run.runId) ?? [], run.group, end));
  }
  const all = overlap(leases);
  const entries = histories.flat();
  const held = entries.find((e) => e.reason === 'RATE_LIMITED');
  return {
    leases: all,
    groups: groupOverlap(leases),
    claimTimes: claimTimes(histories),
    recovered: entries.filter((e) => e.reason === 'LEASE_EXPIRED').length,
    attemptsFailed: entries.filter((e) => e.reason === 'ATTEMPT_FAILED').length,
    hold: held === undefined ? null : { at: Date.parse(held.at) },
    startedAt,
    runs: runs.length,
  };
}
