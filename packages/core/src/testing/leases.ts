import { expect, it } from 'vitest';
import { planClaim } from '../machine/claim-policy.js';
import { transition } from '../machine/state-machine.js';
import { describeArea, type HarnessFactory, manualClock, sleep, waitFor, waitForStatus } from './harness.js';

/** Leases: fencing tokens, heartbeats, recovery of expired leases (automatic, manual, limit). */
export function leasesSuite<Tx>(factory: HarnessFactory<Tx>): void {
  describeArea('leases and recovery', factory, (area) => {
    /** A fresh harness, a producer of the `lease` task on a manual clock, and one run started. */
    async function startLeaseRun() {
      await area.harness();
      const clock = manualClock();
      const producer = await area.open(area.h.store, { name: 'lease', version: '1' }, undefined, {
        runtime: { mode: 'producer' },
        clock,
      });
      const { runId } = await producer.task.start({ query: null });
      return { clock, producer, runId };
    }

    /** Claims a run as a worker that then dies: nobody executes it or renews its lease. */
    async function claimAsDeadWorker(runId: string, now: number) {
      const claimed = await area.h.store.claimDue({
        namespace: 'default',
        tasks: [{ name: 'lease', version: '1' }],
        limit: 10,
        now,
        plan: (run) => (run.runId === runId ? planClaim(run, 'worker:dead', 3000, now) : null),
      });
      expect(claimed).toHaveLength(1);
      return claimed[0]!;
    }

    /** Runs the recovery sweep once at `now`, as a worker's loop would. */
    function sweep(now: number, recoveryLimit: number) {
      return area.h.store.recoverExpired({
        namespace: 'default',
        limit: 10,
        now,
        plan: (run) => {
          const d = transition(run, { type: 'lease_expired', actor: 'sweeper', recoveryLimit }, now);
          return d.ok ? { run: d.run, history: [d.history], events: d.events } : null;
        },
      });
    }

    /** What the store's current row says to a commit by the dead worker holding fencing token 1 (nothing is written). */
    function staleCommitVerdict(runId: string, now: number) {
      return area.h.store.transact('default', runId, (_tx, current) => {
        const decision = transition(current!, { type: 'page_end', actor: 'worker:dead', leaseToken: 1 }, now);
        return { write: null, value: decision.ok ? 'accepted' : decision.refusal };
      });
    }

    it('recovers an expired lease, refuses the old holder commit, and finishes the run', async () => {
      const { clock, producer, runId } = await startLeaseRun();
      const dead = await claimAsDeadWorker(runId, clock.now());
      expect(dead.lease).toMatchObject({ owner: 'worker:dead', token: 1 });
      clock.advance(3001);
      let executed = 0;
      await area.open(
        area.h.secondStore(),
        { name: 'lease', version: '1' },
        {
          execute(ctx) {
            executed++;
            return ctx.end({ effect: (tx) => area.h.writeAppRow(tx, ctx.runId) });
          },
        },
        { protocol: { leaseMs: 3000, heartbeatMs: 1000 }, clock },
      );
      const info = await waitForStatus(producer.task, runId, 'success');
      expect(info.recoveries).toBe(1);
      expect(executed).toBe(1);
      const reasons = (await producer.task.history(runId)).map((e) => e.reason);
      expect(reasons).toEqual(['STARTED', 'CLAIMED', 'LEASE_EXPIRED', 'CLAIMED', 'COMPLETED']);
      // The dead worker's fencing token is stale now: its commit changes nothing.
      const refused = await staleCommitVerdict(runId, clock.now());
      expect(refused).toBe('TERMINAL');
      expect(await area.h.countAppRows(runId)).toBe(1);
    });

    it('refuses a commit with a stale fencing token while another worker holds the run', async () => {
      const { clock, runId } = await startLeaseRun();
      await claimAsDeadWorker(runId, clock.now());
      clock.advance(3001);
      await sweep(clock.now(), 20);
      const second = await claimAsDeadWorker(runId, clock.now());
      expect(second.lease?.token).toBe(2);
      const verdict = await staleCommitVerdict(runId, clock.now());
      expect(verdict).toBe('LEASE_LOST');
      expect(await area.h.raw.run(runId)).toMatchObject({ status: 'running' });
    });

    it('blocks the run with RECOVERY_REQUIRED when recovery is manual', async () => {
      await area.harness();
      const clock = manualClock();
      const producer = await area.open(area.h.store, { name: 'lease', version: '1', recovery: 'manual' }, undefined, {
        runtime: { mode: 'producer' },
        clock,
      });
      const { runId } = await producer.task.start({ query: null });
      await claimAsDeadWorker(runId, clock.now());
      clock.advance(3001);
      await area.open(
        area.h.secondStore(),
        { name: 'lease', version: '1', recovery: 'manual' },
        { execute: (ctx) => ctx.end() },
        { clock },
      );
      const info = await waitForStatus(producer.task, runId, 'blocked');
      expect(info.reason).toBe('RECOVERY_REQUIRED');
    });

    it('leaves a run blocked by recovery to an operator: task.run neither claims nor executes it', async () => {
      await area.harness();
      const clock = manualClock();
      let executed = 0;
      const definition = { name: 'lease', version: '1', recovery: 'manual' as const };
      const opened = await area.open(
        area.h.store,
        definition,
        {
          execute(ctx) {
            executed++;
            return ctx.end();
          },
        },
        { clock, runtime: { concurrency: 0 } },
      );
      const { runId } = await opened.task.start({ query: null });
      await claimAsDeadWorker(runId, clock.now());
      clock.advance(3001);
      const blocked = await opened.task.run(runId);
      expect(blocked).toMatchObject({ status: 'blocked', reason: 'RECOVERY_REQUIRED' });
      expect(await opened.task.run(runId)).toMatchObject({ status: 'blocked', reason: 'RECOVERY_REQUIRED' });
      expect(executed).toBe(0);
      const reasons = async () => (await opened.task.history(runId)).map((e) => e.reason);
      expect(await reasons()).toEqual(['STARTED', 'CLAIMED', 'RECOVERY_REQUIRED']);
      const resumed = await opened.queue.operator.runs.resume({
        runId,
        expectedRevision: blocked!.revision,
        reason: 'checked: no notice was registered',
        commandId: 'resume-after-check',
      });
      expect(resumed).toMatchObject({ kind: 'applied', status: 'pending' });
      expect(await opened.task.run(runId)).toMatchObject({ status: 'success' });
      expect(executed).toBe(1);
    });

    it('blocks the run with RECOVERY_EXHAUSTED after recoveryLimit consecutive recoveries', async () => {
      const { clock, producer, runId } = await startLeaseRun();
      for (let i = 0; i < 3; i++) {
        await claimAsDeadWorker(runId, clock.now());
        clock.advance(3001);
        await sweep(clock.now(), 2);
      }
      const info = await producer.task.get(runId);
      expect(info).toMatchObject({ status: 'blocked', reason: 'RECOVERY_EXHAUSTED', recoveries: 2 });
    });

    it('renews the lease with heartbeats so a long page is not recovered', async () => {
      await area.harness();
      const clock = manualClock();
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let started = false;
      const opened = await area.open(
        area.h.store,
        { name: 'lease', version: '1', policy: { timeoutMs: 60_000 } },
        {
          async execute(ctx) {
            started = true;
            await gate;
            return ctx.end();
          },
        },
        { protocol: { leaseMs: 3000, heartbeatMs: 1000 }, clock },
      );
      const { runId } = await opened.task.start({ query: null });
      await waitFor(() => started, 'page to start');
      const claimedAt = clock.now();
      clock.advance(2500);
      await waitFor(
        async () => ((await area.h.store.getRun('default', runId))?.lease?.expiresAt ?? 0) >= claimedAt + 5500,
        'a heartbeat to renew the lease',
        5000,
      );
      clock.advance(2500); // past the first expiry, inside the renewed one
      await sleep(50);
      release();
      const info = await waitForStatus(opened.task, runId, 'success');
      expect(info.recoveries).toBe(0);
      expect((await opened.task.history(runId)).map((e) => e.reason)).not.toContain('LEASE_EXPIRED');
    });
  });
}
