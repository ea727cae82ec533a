import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createQueue, isDocketError, type OperatorResult } from '../src/index.js';
import { commitDecision, commitGate, planModelCall } from '../src/machine/commit-policy.js';
import { memoryStore, planClaim, type RunRecord, type TransitionInput, transition } from '../src/store/index.js';
import { manualClock } from '../src/testing/index.js';

/** One step of a random history: what producers, two workers, an operator, a sweeper or the clock can do. */
type Command =
  | {
      kind: 'start';
      key: number | null;
      query: number;
      trigger: 'none' | 'at' | 'event';
      budget: number | null;
      deadline: number | null;
    }
  | { kind: 'claim'; worker: number }
  | { kind: 'commit'; worker: number; how: 'next' | 'end'; checkOk: boolean }
  | { kind: 'fail'; worker: number; how: 'fail' | 'timeout' | 'contract' | 'release' }
  | { kind: 'spend'; worker: number }
  | { kind: 'cancel'; run: number }
  | { kind: 'deliver'; run: number; id: number; variant: number }
  | {
      kind: 'operator';
      run: number;
      op: 'pause' | 'resume' | 'cancel';
      stale: boolean;
      commandId: number;
      reason: number;
    }
  | { kind: 'heartbeat'; worker: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'recover' }
  | { kind: 'fire' };

const worker = fc.integer({ min: 0, max: 1 });
const runIndex = fc.integer({ min: 0, max: 5 });
const command: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.constant({ kind: 'claim' as const, worker: 0 }), weight: 3 },
  { arbitrary: fc.constant({ kind: 'commit' as const, worker: 0, how: 'end' as const, checkOk: true }), weight: 2 },
  // Time passing between a claim and its commit is what makes deadlines bite at commit.
  {
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 500, max: 3000 }) }),
    weight: 2,
  },
  fc.record({
    kind: fc.constant('start' as const),
    key: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
    query: fc.integer({ min: 0, max: 1 }),
    trigger: fc.constantFrom('none' as const, 'none' as const, 'at' as const, 'event' as const),
    budget: fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }),
    deadline: fc.option(fc.integer({ min: 500, max: 6000 }), { nil: null, freq: 3 }),
  }),
  fc.record({ kind: fc.constant('claim' as const), worker }),
  fc.record({
    kind: fc.constant('commit' as const),
    worker,
    how: fc.constantFrom('next' as const, 'end' as const),
    checkOk: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('fail' as const),
    worker,
    how: fc.constantFrom('fail' as const, 'timeout' as const, 'contract' as const, 'release' as const),
  }),
  fc.record({ kind: fc.constant('spend' as const), worker }),
  fc.record({ kind: fc.constant('cancel' as const), run: runIndex }),
  fc.record({
    kind: fc.constant('deliver' as const),
    run: runIndex,
    id: fc.integer({ min: 0, max: 1 }),
    variant: fc.integer({ min: 0, max: 1 }),
  }),
  fc.record({
    kind: fc.constant('operator' as const),
    run: runIndex,
    op: fc.constantFrom('pause' as const, 'resume' as const, 'cancel' as const),
    stale: fc.boolean(),
    commandId: fc.integer({ min: 0, max: 3 }),
    reason: fc.integer({ min: 0, max: 1 }),
  }),
  fc.record({ kind: fc.constant('heartbeat' as const), worker }),
  fc.record({
    kind: fc.constant('advance' as const),
    ms: fc.oneof(fc.integer({ min: 0, max: 4000 }), fc.constant(20_000)),
  }),
  fc.constant({ kind: 'recover' as const }),
  fc.constant({ kind: 'fire' as const }),
);

const LEASE_MS = 3000;
const NS = 'default';
const COMMITTING = new Set(['PAGE_COMMITTED', 'COMPLETED']);
/** How often each commit outcome happened, to show the histories reach every branch. */
const outcomes: Record<string, number> = {};

describe('invariants under random command sequences', () => {
  it('holds every run invariant over 1,000 random histories', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 40, size: 'large' }), async (commands) => {
        const store = memoryStore();
        const clock = manualClock(1_000_000);
        const queue = createQueue({ store, clock, runtime: { mode: 'producer' } });
        const task = queue.define<number>({
          name: 'p',
          version: '1',
          policy: { attempts: 2, backoff: { baseMs: 10, maxMs: 100 } },
          events: ['success', 'failure', 'batchSettled'],
        });
        await queue.ready();
        const runIds: string[] = [];
        const createdPerKey = new Map<number, number>();
        const held: ({ runId: string; token: number } | null)[] = [null, null];
        const issuedTokens = new Map<string, number>();
        const receipts = new Map<string, { request: string; result: OperatorResult }>();
        let previous = new Map<string, RunRecord>();

        const apply = async (runId: string, input: TransitionInput) =>
          store.transact(NS, runId, (_tx, current) => {
            if (!current) return { write: null, value: false };
            const d = transition(current, input, clock.now());
            return d.ok
              ? { write: { run: d.run, history: [d.history], events: d.events }, value: true }
              : { write: null, value: false };
          });

        for (const cmd of commands) {
          const historyBefore = new Map(runIds.map((id) => [id, store.raw.history(NS, id).length]));
          let forbidCommitOn: string | null = null;
          switch (cmd.kind) {
            case 'start': {
              try {
                const result = await task.start({
                  query: cmd.query,
                  ...(cmd.key === null ? {} : { idempotencyKey: `k${cmd.key}` }),
                  ...(cmd.trigger === 'at' ? { trigger: { at: new Date(clock.now() + 2000) } } : {}),
                  ...(cmd.trigger === 'event' ? { trigger: { event: 'go' } } : {}),
                  limits: {
                    ...(cmd.budget === null ? {} : { modelCalls: cmd.budget }),
                    ...(cmd.deadline === null ? {} : { deadlineAt: new Date(clock.now() + cmd.deadline) }),
                  },
                });
                if (result.created) {
                  runIds.push(result.runId);
                  if (cmd.key !== null) createdPerKey.set(cmd.key, (createdPerKey.get(cmd.key) ?? 0) + 1);
                }
              } catch (error) {
                expect(isDocketError(error, 'IDEMPOTENCY_CONFLICT')).toBe(true);
              }
              break;
            }
            case 'claim': {
              const now = clock.now();
              const claimed = await store.claimDue({
                namespace: NS,
                tasks: [{ name: 'p', version: '1' }],
                limit: 1,
                now,
                plan: (run) => planClaim(run, `worker:${cmd.worker}`, LEASE_MS, now),
              });
              for (const run of claimed) {
                if (run.status !== 'running') {
                  // A claim past the deadline ends the run without work.
                  expect(run).toMatchObject({ status: 'cancelled', reason: 'DEADLINE' });
                  continue;
                }
                const token = run.lease!.token;
                expect(token).toBeGreaterThan(issuedTokens.get(run.runId) ?? 0);
                issuedTokens.set(run.runId, token);
                held[cmd.worker] = { runId: run.runId, token };
              }
              break;
            }
            case 'commit': {
              const h = held[cmd.worker];
              if (!h) break;
              const actor = `worker:${cmd.worker}`;
              if (!cmd.checkOk) forbidCommitOn = h.runId;
              const outcome = await store.transact(NS, h.runId, (_tx, current) => {
                const now = clock.now();
                const gate = commitGate(current, h.token, actor, now);
                if (gate.kind === 'lost') return { write: null, value: 'lost' };
                if (gate.kind === 'deadline') return { write: gate.write, value: 'deadline' };
                const check = cmd.checkOk ? { ok: true as const } : { ok: false as const, reason: 'flipped' };
                const decided = commitDecision(
                  gate.run,
                  h.token,
                  actor,
                  { kind: cmd.how, state: { n: 1 } },
                  check,
                  {},
                  now,
                );
                return { write: decided.write, value: decided.kind };
              });
              outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
              if (outcome === 'lost' || outcome === 'deadline') forbidCommitOn = h.runId;
              held[cmd.worker] = null;
              break;
            }
            case 'fail': {
              const h = held[cmd.worker];
              if (!h) break;
              const actor = `worker:${cmd.worker}`;
              const error = { code: 'E', name: 'Error', message: 'x', truncated: false };
              const input: TransitionInput =
                cmd.how === 'contract'
                  ? { type: 'contract_invalid', actor, leaseToken: h.token, error }
                  : cmd.how === 'release'
                    ? { type: 'release', actor, leaseToken: h.token }
                    : {
                        type: 'attempt_failed',
                        actor,
                        leaseToken: h.token,
                        error,
                        timedOut: cmd.how === 'timeout',
                        random: 0.5,
                      };
              const before = store.raw.run(NS, h.runId);
              const applied = await apply(h.runId, input);
              const holds =
                before !== undefined &&
                before.fence === h.token &&
                (before.status === 'running' || before.status === 'pausing');
              expect(applied).toBe(holds);
              held[cmd.worker] = null;
              break;
            }
            case 'spend': {
              const h = held[cmd.worker];
              if (!h) break;
              const planned = await store.transact(NS, h.runId, (_tx, current) => {
                const p = planModelCall(current, h.token, `worker:${cmd.worker}`, clock.now());
                return { write: p.kind === 'lost' ? null : p.write, value: p.kind };
              });
              if (planned === 'exhausted') {
                expect(store.raw.run(NS, h.runId)).toMatchObject({ status: 'cancelled', reason: 'MODEL_CALL_BUDGET' });
              }
              break;
            }
            case 'cancel': {
              const runId = runIds[cmd.run];
              if (runId) await task.cancel(runId);
              break;
            }
            case 'deliver': {
              const runId = runIds[cmd.run];
              if (!runId) break;
              try {
                const result = await queue.events.deliver(runId, {
                  id: `e${cmd.id}`,
                  type: 'go',
                  payload: { v: cmd.variant },
                });
                if (result.accepted) expect(result.status).toBe('pending');
              } catch (error) {
                expect(isDocketError(error, 'EVENT_CONFLICT')).toBe(true);
              }
              break;
            }
            case 'operator': {
              const runId = runIds[cmd.run];
              if (!runId) break;
              const current = store.raw.run(NS, runId)!;
              const request = {
                runId,
                expectedRevision: cmd.stale ? Math.max(1, current.revision - 1) : current.revision,
                reason: `reason ${cmd.reason}`,
                commandId: `c${cmd.commandId}`,
              };
              const requestKey = JSON.stringify([cmd.op, request.runId, request.expectedRevision, request.reason]);
              const earlier = receipts.get(request.commandId);
              try {
                const result = await queue.operator.runs[cmd.op](request);
                if (earlier) {
                  // A reused command id answers its first result, whatever happened since.
                  expect(earlier.request).toBe(requestKey);
                  expect(result).toEqual(earlier.result);
                } else {
                  receipts.set(request.commandId, { request: requestKey, result });
                }
              } catch (error) {
                if (isDocketError(error, 'COMMAND_CONFLICT')) {
                  expect(earlier && earlier.request !== requestKey).toBe(true);
                } else {
                  expect(isDocketError(error, 'REVISION_CONFLICT')).toBe(true);
                  expect(earlier).toBeUndefined();
                  expect(cmd.stale && current.revision > 1).toBe(true);
                }
              }
              break;
            }
            case 'heartbeat': {
              const h = held[cmd.worker];
              if (!h) break;
              await store.transact(NS, h.runId, (_tx, current) => {
                if (!current || current.fence !== h.token || current.lease === null || current.status !== 'running') {
                  return { write: null, value: null };
                }
                const run = { ...current, lease: { ...current.lease, expiresAt: clock.now() + LEASE_MS } };
                return { write: { run, history: [], events: [] }, value: null };
              });
              break;
            }
            case 'advance':
              clock.advance(cmd.ms);
              break;
            case 'recover': {
              const now = clock.now();
              await store.recoverExpired({
                namespace: NS,
                limit: 10,
                now,
                plan: (run) => {
                  const d = transition(run, { type: 'lease_expired', actor: 'sweeper', recoveryLimit: 2 }, now);
                  return d.ok ? { run: d.run, history: [d.history], events: d.events } : null;
                },
              });
              break;
            }
            case 'fire': {
              for (const runId of runIds) await apply(runId, { type: 'time_reached', actor: 'clock' });
              break;
            }
          }

          const current = new Map<string, RunRecord>();
          for (const runId of runIds) {
            const run = store.raw.run(NS, runId)!;
            const history = store.raw.history(NS, runId);
            current.set(runId, run);
            // revision rises by exactly one per change, and each change has exactly one history entry
            expect(run.revision).toBe(history.length);
            history.forEach((entry, i) => {
              expect(entry.seq).toBe(i + 1);
              if (i > 0) expect(entry.from).toBe(history[i - 1]!.to);
              // never a commit past the deadline
              if (COMMITTING.has(entry.reason) && run.deadlineAt !== null) {
                expect(Date.parse(entry.at)).toBeLessThan(run.deadlineAt);
              }
            });
            expect(history.at(-1)!.to).toBe(run.status);
            // never a commit after a failed check, a lost lease, a cancel or a stop: the step added no commit entry
            if (forbidCommitOn === runId) {
              const added = history.slice(historyBefore.get(runId) ?? 0);
              expect(added.some((e) => COMMITTING.has(e.reason))).toBe(false);
            }
            if (run.modelCallLimit !== null) expect(run.modelCallsUsed).toBeLessThanOrEqual(run.modelCallLimit);
            const before = previous.get(runId);
            if (before) {
              // terminal statuses never change
              if (['success', 'failed', 'cancelled'].includes(before.status)) {
                expect(run.status).toBe(before.status);
                expect(run.revision).toBe(before.revision);
              }
              expect(run.page).toBeGreaterThanOrEqual(before.page);
              expect(run.revision).toBeGreaterThanOrEqual(before.revision);
            }
            // a run never has two live leases
            if (run.lease !== null) {
              expect(['running', 'pausing']).toContain(run.status);
              expect(run.lease.token).toBe(run.fence);
            }
            const holders = held.filter(
              (h) =>
                h?.runId === runId && h.token === run.fence && (run.status === 'running' || run.status === 'pausing'),
            );
            expect(holders.length).toBeLessThanOrEqual(1);
          }
          previous = current;
        }
        // created: true at most once per idempotency key
        for (const count of createdPerKey.values()) expect(count).toBe(1);
        await queue.close();
      }),
      { numRuns: 1000 },
    );
    // The random histories must reach every commit branch, or the invariants above prove little.
    for (const branch of ['committed', 'blocked', 'deadline', 'lost']) {
      expect(outcomes[branch] ?? 0, `${branch} in ${JSON.stringify(outcomes)}`).toBeGreaterThanOrEqual(3);
    }
  }, 180_000);
});
