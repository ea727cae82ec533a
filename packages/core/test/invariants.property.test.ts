import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createQueue,
  isDocketError,
  memoryStore,
  type RunRecord,
  type TransitionInput,
  transition,
} from '../src/index.js';
import { manualClock } from '../src/testing/index.js';
import { planClaim } from '../src/worker.js';

/** One step of a random history: what a producer, two workers, a sweeper or the clock can do. */
type Command =
  | { kind: 'start'; key: number | null; query: number; trigger: boolean }
  | { kind: 'claim'; worker: number }
  | { kind: 'settle'; worker: number; how: 'next' | 'end' | 'fail' | 'timeout' | 'contract' | 'release' }
  | { kind: 'cancel'; run: number }
  | { kind: 'heartbeat'; worker: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'recover' }
  | { kind: 'fire' };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant('start' as const),
    key: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
    query: fc.integer({ min: 0, max: 1 }),
    trigger: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('claim' as const), worker: fc.integer({ min: 0, max: 1 }) }),
  fc.record({
    kind: fc.constant('settle' as const),
    worker: fc.integer({ min: 0, max: 1 }),
    how: fc.constantFrom('next', 'end', 'fail', 'timeout', 'contract', 'release'),
  }),
  fc.record({ kind: fc.constant('cancel' as const), run: fc.integer({ min: 0, max: 5 }) }),
  fc.record({ kind: fc.constant('heartbeat' as const), worker: fc.integer({ min: 0, max: 1 }) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 4000 }) }),
  fc.constant({ kind: 'recover' as const }),
  fc.constant({ kind: 'fire' as const }),
);

const LEASE_MS = 3000;
const NS = 'default';

describe('invariants under random command sequences', () => {
  it('holds every run invariant over 1,000 random histories', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 30 }), async (commands) => {
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
        /** What each worker believes it holds: run id and fencing token. */
        const held: ({ runId: string; token: number } | null)[] = [null, null];
        const issuedTokens = new Map<string, number>();
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
          switch (cmd.kind) {
            case 'start': {
              try {
                const trigger = cmd.trigger ? { at: new Date(clock.now() + 2000) } : undefined;
                const result = await task.start({
                  query: cmd.query,
                  ...(cmd.key === null ? {} : { idempotencyKey: `k${cmd.key}` }),
                  ...(trigger ? { trigger } : {}),
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
              const actor = `worker:${cmd.worker}`;
              const claimed = await store.claimDue({
                namespace: NS,
                tasks: [{ name: 'p', version: '1' }],
                limit: 1,
                now,
                plan: (run) => planClaim(run, actor, LEASE_MS, now),
              });
              for (const run of claimed) {
                if (run.status !== 'running') continue;
                const token = run.lease!.token;
                // A claim always issues a fencing token never seen before for this run.
                expect(token).toBeGreaterThan(issuedTokens.get(run.runId) ?? 0);
                issuedTokens.set(run.runId, token);
                held[cmd.worker] = { runId: run.runId, token };
              }
              break;
            }
            case 'settle': {
              const h = held[cmd.worker];
              if (!h) break;
              const actor = `worker:${cmd.worker}`;
              const error = { code: 'E', name: 'Error', message: 'x', truncated: false };
              const input: TransitionInput =
                cmd.how === 'next'
                  ? { type: 'settle_next', actor, leaseToken: h.token, state: { n: 1 } }
                  : cmd.how === 'end'
                    ? { type: 'settle_end', actor, leaseToken: h.token }
                    : cmd.how === 'contract'
                      ? { type: 'contract_invalid', actor, leaseToken: h.token, error }
                      : cmd.how === 'release'
                        ? { type: 'release', actor, leaseToken: h.token }
                        : {
                            type: 'settle_failure',
                            actor,
                            leaseToken: h.token,
                            error,
                            timedOut: cmd.how === 'timeout',
                            random: 0.5,
                          };
              const before = await store.getRun(NS, h.runId);
              const applied = await apply(h.runId, input);
              // A settle lands only when its token is the run's current fence and the run is still held.
              const holds =
                before !== null &&
                before.fence === h.token &&
                (before.status === 'running' || before.status === 'pausing');
              expect(applied).toBe(holds);
              held[cmd.worker] = null;
              break;
            }
            case 'cancel': {
              const runId = runIds[cmd.run];
              if (runId) await task.cancel(runId);
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
            });
            expect(history.at(-1)!.to).toBe(run.status);
            const before = previous.get(runId);
            if (before) {
              // terminal statuses never change
              if (['success', 'failed', 'cancelled'].includes(before.status)) {
                expect(run.status).toBe(before.status);
                expect(run.revision).toBe(before.revision);
              }
              // page never decreases
              expect(run.page).toBeGreaterThanOrEqual(before.page);
              expect(run.revision).toBeGreaterThanOrEqual(before.revision);
            }
            // a run never has two live leases: a lease exists only while running or pausing, with the current fence
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
  }, 120_000);
});
