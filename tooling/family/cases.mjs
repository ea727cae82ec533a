// The child-run trials both SQL stores' tests run, as vitest cases. `open()` answers a producer queue on a fresh
// store with the family tasks defined (`defineFamilyTasks(queue, { handlers: false })`) and `spawnWorker(id, mode)`
// starts a worker process on it (tooling/family/app.mjs); `reset()` drops what one trial left.
import { expect, it } from 'vitest';
import { spawnFlowWorker } from '../flow/spawn.mjs';

/** Waits until `predicate` answers something truthy, polling every 50 ms, or throws after `timeoutMs`. */
async function until(predicate, what, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every child of a parent through the operator, in id order. */
async function allChildren(queue, parentRunId) {
  const items = [];
  let cursor;
  do {
    const slice = await queue.operator.runs.list({
      parentRunId,
      limit: 200,
      payloads: true,
      ...(cursor ? { cursor } : {}),
    });
    items.push(...slice.items);
    cursor = slice.nextCursor ?? undefined;
  } while (cursor);
  return items.reverse();
}

/** Checks a finished fan-out: each child once and settled, the parent woken once, its next page saw them all. */
async function expectWholeFanout(producer, fanout, runId, count) {
  const done = await until(async () => {
    const info = await fanout.get(runId);
    return info?.status === 'success' ? info : null;
  }, `fan-out ${runId} to succeed`);
  expect(done.children).toEqual({ total: count, settled: count });
  expect(done.state).toEqual({ seen: count, succeeded: count, inOrder: true });
  const reasons = (await fanout.history(runId)).map((entry) => entry.reason);
  expect(reasons.filter((reason) => reason === 'CHILDREN_STARTED')).toHaveLength(1);
  expect(reasons.filter((reason) => reason === 'CHILDREN_SETTLED')).toHaveLength(1);
  const children = await allChildren(producer, runId);
  expect(children).toHaveLength(count);
  expect(new Set(children.map((child) => child.query.index)).size).toBe(count);
  expect(children.every((child) => child.status === 'success')).toBe(true);
}

/** Registers the trials of child runs across worker processes. */
export function familyTrialCases({ open, spawnWorker, reset }) {
  const workers = [];
  const start = async (id, mode) => {
    const worker = spawnWorker(id, mode);
    workers.push(worker);
    await worker.ready;
    return worker;
  };
  const stopAll = async () => {
    for (const { proc } of workers.splice(0)) {
      if (proc.exitCode !== null || proc.signalCode !== null) continue;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  const exitOf = (proc) =>
    proc.exitCode !== null || proc.signalCode !== null
      ? Promise.resolve(proc.signalCode)
      : new Promise((resolve) => proc.once('exit', (_code, signal) => resolve(signal)));

  it('four worker processes settle 1,000 children: the counter ends at 1,000 and the parent wakes once', async () => {
    try {
      const { producer, tasks } = await open();
      const { runId } = await tasks.fanout.start({ query: { children: 1000 } });
      await Promise.all(['w0', 'w1', 'w2', 'w3'].map((id) => start(id, 'plain')));
      await expectWholeFanout(producer, tasks.fanout, runId, 1000);
    } finally {
      await stopAll();
      await reset();
    }
  });

  for (const mode of ['kill-first-leaf', 'kill-last-leaf']) {
    it(`SIGKILL ${mode === 'kill-first-leaf' ? 'after the parent committed, as the first child begins' : 'as the last child settles'}: each child once, the parent woken once`, async () => {
      try {
        const { producer, tasks } = await open();
        const { runId } = await tasks.fanout.start({ query: { children: 50 } });
        const doomed = spawnWorker('doomed', mode);
        workers.push(doomed);
        await doomed.ready.catch(() => undefined);
        expect(await exitOf(doomed.proc)).toBe('SIGKILL');
        await start('rescuer', 'plain');
        await expectWholeFanout(producer, tasks.fanout, runId, 50);
      } finally {
        await stopAll();
        await reset();
      }
    });
  }
}

export { spawnFlowWorker as spawnFamilyWorker };
