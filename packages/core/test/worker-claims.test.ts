import { describe, expect, it } from 'vitest';
import { createQueue, type Store } from '../src/index.js';
import { memoryStore, type SelectRequest } from '../src/store/index.js';
import { waitFor, waitForStatus } from '../src/testing/harness.js';

describe('the worker loop', () => {
  it('executes only the runs claimDue answers, not every row it showed the plan', async () => {
    const store = memoryStore();
    const definition = { name: 'shown', version: '1' };
    const producer = createQueue({ store, runtime: { mode: 'producer' } });
    const task = producer.define(definition);
    await producer.ready();
    const { runId } = await task.start({ query: 1 });

    // A store that, once, shows the plan a row it then does not write (as a store claiming from a remembered row
    // that has moved would), and answers no runs.
    let shown = 0;
    const showing: Store = Object.assign(Object.create(store) as Store, {
      async claimDue(request: SelectRequest) {
        if (shown === 0) {
          const row = await store.getRun(request.namespace, runId);
          if (row !== null && request.plan(row) !== null) shown++;
          if (shown > 0) return [];
        }
        return store.claimDue(request);
      },
    });
    const executions: string[] = [];
    const consumer = createQueue({ store: showing, runtime: { mode: 'consumer', concurrency: 2 } });
    consumer.define(definition, {
      execute(ctx) {
        executions.push(ctx.runId);
        return ctx.end();
      },
    });
    try {
      await consumer.ready();
      await waitForStatus(task, runId, 'success');
      expect(shown).toBe(1);
      // Once, from the claim that was written; the plan shown first claimed nothing.
      expect(executions).toEqual([runId]);
      expect((await task.history(runId)).map((h) => h.reason)).toEqual(['STARTED', 'CLAIMED', 'COMPLETED']);
    } finally {
      await consumer.close();
      await producer.close();
    }
  });

  /** A producer that started three runs of `name` on `store`, and a consumer of them (closed by `finish`). */
  async function threeRunsAndConsumer(store: Store, consumerStore: Store, name: string, concurrency: number) {
    const definition = { name, version: '1' };
    const producer = createQueue({ store, runtime: { mode: 'producer' } });
    const task = producer.define(definition);
    await producer.ready();
    const runIds = [];
    for (let i = 0; i < 3; i++) runIds.push((await task.start({ query: i })).runId);
    // A poll far longer than the test: every claim after the first comes from the loop itself.
    const consumer = createQueue({
      store: consumerStore,
      runtime: { mode: 'consumer', concurrency },
      protocol: { pollMs: 60_000 },
    });
    consumer.define(definition, { execute: (ctx) => ctx.end() });
    const finish = async () => {
      await consumer.close();
      await producer.close();
    };
    return { task, runIds, consumer, finish };
  }

  it('does not claim again after a claim that took fewer runs than it asked for', async () => {
    const store = memoryStore();
    let claims = 0;
    const counting: Store = Object.assign(Object.create(store) as Store, {
      claimDue(request: SelectRequest) {
        claims++;
        return store.claimDue(request);
      },
    });
    const { task, runIds, consumer, finish } = await threeRunsAndConsumer(store, counting, 'partial', 8);
    try {
      await consumer.ready();
      for (const runId of runIds) await waitForStatus(task, runId, 'success');
      await new Promise((resolve) => setTimeout(resolve, 50));
      // One claim of three runs (the limit was eight), then the loop sleeps: no empty claim after it, and the
      // three settled pages do not wake it while slots are free.
      expect(claims).toBe(1);
    } finally {
      await finish();
    }
  });

  it('wakes a loop whose every slot is taken as soon as a page settles', async () => {
    const store = memoryStore();
    // One slot: each next claim can only come from the settled page's wake.
    const { task, runIds, consumer, finish } = await threeRunsAndConsumer(store, store, 'full', 1);
    try {
      await consumer.ready();
      for (const runId of runIds) await waitForStatus(task, runId, 'success', 5_000);
    } finally {
      await finish();
    }
  });

  it('claims again at once when a lease it waited for was given back while its claim was in flight', async () => {
    const store = memoryStore();
    const definition = { name: 'one-at-a-time', version: '1', flow: { concurrency: 1 } };
    const producer = createQueue({ store, runtime: { mode: 'producer' } });
    const task = producer.define(definition);
    await producer.ready();
    const first = await task.start({ query: 'first' });
    const second = await task.start({ query: 'second' });
    // The consumer's second claim answers only when released: the first page settles while it is in flight, after
    // it read the first run's lease. No subscription and no starts of its own: only the operator's resume below and
    // its own settles wake its loop.
    let claims = 0;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gated: Store = Object.assign(Object.create(store) as Store, {
      subscribe: undefined,
      async claimDue(request: SelectRequest) {
        const claimed = await store.claimDue(request);
        if (++claims === 2) await held;
        return claimed;
      },
    });
    let firstRunning = () => {};
    const running = new Promise<void>((resolve) => {
      firstRunning = resolve;
    });
    let finishFirst = () => {};
    const finished = new Promise<void>((resolve) => {
      finishFirst = resolve;
    });
    // A poll far longer than the test: a claim after the held one comes from a wake or from the loop itself.
    const consumer = createQueue({
      store: gated,
      runtime: { mode: 'consumer', concurrency: 4 },
      protocol: { pollMs: 60_000 },
    });
    consumer.define(definition, {
      async execute(ctx) {
        if (ctx.query === 'first') {
          firstRunning();
          await finished;
        }
        return ctx.end();
      },
    });
    try {
      await consumer.ready();
      await running;
      // A pause and a resume: the resume wakes the loop, whose claim is held back by the first run's lease.
      const command = { task: definition.name, reason: 'wake the loop', commandId: 'pause' };
      await consumer.operator.tasks.pause({ ...command, expectedRevision: 1 });
      await consumer.operator.tasks.resume({ ...command, expectedRevision: 2, commandId: 'resume' });
      await waitFor(() => claims === 2, 'the claim held back by the concurrency limit');
      finishFirst();
      await waitForStatus(task, first.runId, 'success', 5_000);
      release();
      await waitForStatus(task, second.runId, 'success', 5_000);
    } finally {
      release();
      finishFirst();
      await consumer.close();
      await producer.close();
    }
  });
});
