import * as v from 'valibot';
import { expect, it } from 'vitest';
import type { RunInfo } from '../machine/run-types.js';
import { createQueue, type Queue } from '../runtime/queue/create-queue.js';
import type { BatchTask } from '../runtime/task/batch-task.js';
import type { ExecuteContext, TaskHandlers } from '../runtime/task/handlers.js';
import type { Json } from '../util/json.js';
import { NonRetryableError } from '../util/retry-errors.js';
import {
  type Area,
  type ConformanceHarness,
  describeArea,
  type HarnessFactory,
  type ManualClock,
  manualClock,
  waitFor,
  waitForStatus,
} from './harness.js';

/** A child's handler: `'fail'` fails at once, `'hang'` waits until its signal aborts, anything else succeeds. */
type ChildQuery = { n: number; mode?: 'fail' | 'hang' };

/** What a parent's page does: the children to start on page 1, then what its next page saw. */
interface ParentPlan {
  children: (child: BatchTask<ChildQuery, Json>) => unknown;
  childFailure?: 'continue' | 'fail';
  seen: Json[][];
}

/** One queue with a `parent` task and a `child` task; the parent's first page starts children, its second ends. */
async function familyQueue<Tx>(
  area: Area<Tx>,
  plan: ParentPlan,
  options: { deadlineMs?: number; harness?: ConformanceHarness<Tx>; clock?: ManualClock } = {},
) {
  const h = options.harness ?? (await area.harness());
  const queue: Queue<Tx> = createQueue<Tx>({
    store: h.store,
    logger: false,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    // A child cancelled by its parent while its page runs learns it at its next heartbeat (the shortest allowed);
    // pages still hanging when a test ends are aborted at close rather than waited for.
    protocol: { pollMs: 10, heartbeatMs: 1000 },
    runtime: { closeGraceMs: 0 },
    defaults: { policy: { attempts: 1, backoff: { baseMs: 1, maxMs: 5 } } },
  });
  area.track(queue);
  const childHandlers: TaskHandlers<ChildQuery, Json, Tx> = {
    async execute(ctx) {
      if (ctx.query.mode === 'fail') throw new NonRetryableError(`child ${ctx.query.n} fails`);
      if (ctx.query.mode === 'hang') {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      }
      return ctx.end();
    },
  };
  const child = queue.define<ChildQuery, Json>(
    { name: 'child', version: '1', schema: { query: v.object({ n: v.number(), mode: v.optional(v.string()) }) } },
    childHandlers,
  );
  const parentHandlers: TaskHandlers<Json, Json, Tx> = {
    execute(ctx: ExecuteContext<Json, Json, Tx>) {
      if (ctx.page === 1) {
        return ctx.next(
          { started: true },
          {
            children: plan.children(child) as never,
            ...(plan.childFailure === undefined ? {} : { childFailure: plan.childFailure }),
          },
        );
      }
      plan.seen.push(ctx.children as unknown as Json[]);
      return ctx.end({ effect: (tx) => h.writeAppRow(tx, ctx.runId) });
    },
  };
  const limits = options.deadlineMs === undefined ? {} : { limits: { deadlineMs: options.deadlineMs } };
  const parent = queue.define<Json, Json>({ name: 'parent', version: '1', ...limits }, parentHandlers);
  await queue.ready();
  return { h, queue, parent, child };
}

/** Every child of a parent, through `operator.runs.list({ parentRunId })`, oldest first. */
async function childrenOf<Tx>(queue: Queue<Tx>, parentRunId: string): Promise<RunInfo[]> {
  const { items } = await queue.operator.runs.list({ parentRunId, limit: 200 });
  const infos = await Promise.all(items.map((item) => queue.operator.runs.get(item.runId)));
  return (infos.filter((info) => info !== null) as RunInfo[]).reverse();
}

/** Child runs: created in the parent's commit, waited for without a lease, fanned in by a counter, cancelled with it. */
export function childrenSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('children', factory, (area) => {
    it('creates the children in the page commit; the parent waits, wakes once after the last, and sees every outcome in order', async () => {
      const plan: ParentPlan = {
        seen: [],
        children: (child) =>
          [0, 1, 2, 3, 4].map((n) => ({ task: child, query: { n, ...(n === 3 ? { mode: 'fail' } : {}) } })),
      };
      const { h, queue, parent } = await familyQueue(area, plan);
      const { runId } = await parent.start({ query: null });
      const done = await waitForStatus(parent, runId, 'success');
      expect(done.children).toEqual({ total: 5, settled: 5 });
      expect(done.parentRunId).toBeNull();
      const reasons = (await parent.history(runId)).map((entry) => entry.reason);
      expect(reasons).toEqual(['STARTED', 'CLAIMED', 'CHILDREN_STARTED', 'CHILDREN_SETTLED', 'CLAIMED', 'COMPLETED']);
      const children = await childrenOf(queue, runId);
      expect(children.map((c) => (c.query as ChildQuery).n)).toEqual([0, 1, 2, 3, 4]);
      expect(children.every((c) => c.parentRunId === runId)).toBe(true);
      expect(plan.seen).toHaveLength(1);
      expect(plan.seen[0]).toEqual(
        children.map((c) => ({
          runId: c.runId,
          task: { name: 'child', version: '1' },
          status: c.status,
          reason: c.reason,
          state: c.state,
          error: c.error,
        })),
      );
      expect(children.map((c) => c.status)).toEqual(['success', 'success', 'success', 'failed', 'success']);
      expect(await h.countAppRows(runId)).toBe(1);
      // A listing reads fewer columns than runs.get: the parent's counts and the children's links read the same.
      const listed = await queue.operator.runs.list({ limit: 10 });
      expect(listed.items).toHaveLength(6);
      for (const item of listed.items) {
        const { query: _query, state: _state, ...shown } = (await queue.operator.runs.get(item.runId)) as RunInfo;
        expect(item).toEqual(shown);
      }
    });

    it("childFailure 'fail': the first failed child cancels the unfinished others (PARENT_FAILED) and fails the parent (CHILD_FAILED)", async () => {
      const plan: ParentPlan = {
        seen: [],
        childFailure: 'fail',
        children: (child) =>
          Array.from({ length: 100 }, (_, n) => ({ task: child, query: { n, mode: n === 0 ? 'fail' : 'hang' } })),
      };
      const { queue, parent } = await familyQueue(area, plan);
      const { runId } = await parent.start({ query: null });
      const failed = await waitForStatus(parent, runId, 'failed');
      expect(failed.reason).toBe('CHILD_FAILED');
      expect(failed.error?.code).toBe('CHILD_FAILED');
      const children = await childrenOf(queue, runId);
      expect(children).toHaveLength(100);
      expect(children[0]).toMatchObject({ status: 'failed', reason: 'NON_RETRYABLE' });
      for (const sibling of children.slice(1)) {
        expect(sibling).toMatchObject({ status: 'cancelled', reason: 'PARENT_FAILED' });
        // Cancelled is the end: no sibling is claimed (or executes a page) after the cancel committed.
        expect((await queue.operator.runs.history(sibling.runId)).at(-1)?.reason).toBe('PARENT_FAILED');
      }
      expect(plan.seen).toEqual([]);
      expect(failed.children).toEqual({ total: 100, settled: 100 });
    });

    it('cancelling a waiting parent cancels its unfinished children in the same transaction (PARENT_CANCELLED)', async () => {
      const plan: ParentPlan = {
        seen: [],
        children: (child) => Array.from({ length: 100 }, (_, n) => ({ task: child, query: { n, mode: 'hang' } })),
      };
      const { queue, parent } = await familyQueue(area, plan);
      const { runId } = await parent.start({ query: null });
      const waiting = await waitForStatus(parent, runId, 'waiting');
      expect(waiting.reason).toBe('CHILDREN_STARTED');
      const result = await queue.operator.runs.cancel({
        runId,
        expectedRevision: waiting.revision,
        reason: 'not needed',
        commandId: `cancel-${runId}`,
      });
      expect(result).toMatchObject({ changed: true });
      const children = await childrenOf(queue, runId);
      expect(children).toHaveLength(100);
      for (const child of children) expect(child).toMatchObject({ status: 'cancelled', reason: 'PARENT_CANCELLED' });
      const cancelled = await parent.get(runId);
      expect(cancelled).toMatchObject({
        status: 'cancelled',
        reason: 'OPERATOR_STOP',
        children: { total: 100, settled: 100 },
      });
    });

    it("a waiting parent's deadline cancels it (DEADLINE) and its children (PARENT_CANCELLED)", async () => {
      const plan: ParentPlan = {
        seen: [],
        children: (child) => [0, 1, 2].map((n) => ({ task: child, query: { n, mode: 'hang' } })),
      };
      const { queue, parent } = await familyQueue(area, plan, { deadlineMs: 400 });
      const { runId } = await parent.start({ query: null });
      await waitForStatus(parent, runId, 'waiting');
      const cancelled = await waitForStatus(parent, runId, 'cancelled');
      expect(cancelled.reason).toBe('DEADLINE');
      const children = await childrenOf(queue, runId);
      for (const child of children) expect(child).toMatchObject({ status: 'cancelled', reason: 'PARENT_CANCELLED' });
    });

    it('a scheduled parent fans out; its children keep the priority and group they were given', async () => {
      const clock = manualClock(Date.parse('2027-01-04T00:00:30.000Z'));
      const plan: ParentPlan = {
        seen: [],
        children: (child) =>
          [5, -3, 0].map((priority, n) => ({ task: child, query: { n }, priority, group: `tenant-${n}` })),
      };
      const { queue, parent } = await familyQueue(area, plan, { clock });
      await parent.schedule('hourly-digest', { cron: '* * * * *', query: null });
      clock.set(Date.parse('2027-01-04T00:01:00.000Z'));
      const fired = await waitFor(
        async () => (await queue.operator.runs.list({ taskName: 'parent' })).items[0],
        'the slot',
      );
      const done = await waitForStatus(parent, fired.runId, 'success');
      expect(done.trigger).toMatchObject({ schedule: 'hourly-digest' });
      expect(done.children).toEqual({ total: 3, settled: 3 });
      const children = await childrenOf(queue, fired.runId);
      expect(children.map((c) => [c.priority, c.group])).toEqual([
        [5, 'tenant-0'],
        [-3, 'tenant-1'],
        [0, 'tenant-2'],
      ]);
      expect(plan.seen[0]).toHaveLength(3);
    });

    it('gives each child without a key child:<parentRunId>:<page>:<index>, and a key already taken fails the parent with no child made', async () => {
      const plan: ParentPlan = {
        seen: [],
        children: (child) => [
          { task: child, query: { n: 0 }, idempotencyKey: 'taken' },
          { task: child, query: { n: 1 } },
        ],
      };
      const { queue, parent, child } = await familyQueue(area, plan);
      const existing = await child.start({ query: { n: 9 }, idempotencyKey: 'taken' });
      const { runId } = await parent.start({ query: null });
      const failed = await waitForStatus(parent, runId, 'failed');
      expect(failed.reason).toBe('HANDLER_CONTRACT_INVALID');
      expect(failed.error?.code).toBe('IDEMPOTENCY_CONFLICT');
      expect(failed.children).toEqual({ total: 0, settled: 0 });
      expect(await childrenOf(queue, runId)).toEqual([]);
      const again = await child.start({ query: { n: 1 }, idempotencyKey: `child:${runId}:1:1` });
      expect(again.created).toBe(true);
      expect((await child.get(existing.runId))?.parentRunId).toBeNull();
    });

    it('fails the run at once (HANDLER_CONTRACT_INVALID) and makes no child for children it cannot start', async () => {
      const harness = await area.harness();
      const other = createQueue<Tx>({ store: harness.store, logger: false });
      area.track(other);
      const foreign = other.define({ name: 'foreign', version: '1' }, { execute: (ctx) => ctx.end() });
      const cases: ((child: BatchTask<ChildQuery, Json>) => unknown)[] = [
        () => [],
        (child) => Array.from({ length: 1001 }, (_, n) => ({ task: child, query: { n } })),
        () => [{ task: foreign, query: null }],
        (child) => [{ task: child, query: { n: 'not a number' } }],
        (child) => [{ task: child, query: { n: 1 }, trigger: { event: 'x' } }],
        (child) => [
          { task: child, query: { n: 1 }, idempotencyKey: 'twice' },
          { task: child, query: { n: 2 }, idempotencyKey: 'twice' },
        ],
      ];
      for (const children of cases) {
        const plan: ParentPlan = { seen: [], children };
        const { queue, parent } = await familyQueue(area, plan, { harness });
        const { runId } = await parent.start({ query: null });
        const failed = await waitForStatus(parent, runId, 'failed');
        expect(failed.reason).toBe('HANDLER_CONTRACT_INVALID');
        expect((await parent.history(runId)).map((e) => e.reason)).toEqual([
          'STARTED',
          'CLAIMED',
          'HANDLER_CONTRACT_INVALID',
        ]);
        expect(await childrenOf(queue, runId)).toEqual([]);
        await expect(queue.operator.runs.list({ parentRunId: 'not-a-run-id' })).rejects.toMatchObject({
          code: 'CONFIG_INVALID',
        });
        await queue.close();
      }
    });
  });
}
