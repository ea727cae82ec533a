import type { PlainClaim, RunRecord, SelectRequest, TaskKey, TaskRecord } from '@docket/core/store';
import { flowStateOf, needsFlow, tasksByName } from '@docket/core/store';
import { WAIT_BOUND_MS, within } from '../../bounded-wait.js';
import type { PgContext } from '../../context.js';
import { classify, OutcomeTracker } from '../../errors.js';
import { taskRecords } from '../../flow/task-rows.js';
import { preparedCall } from '../../wire/prepared-calls.js';
import { type Session, sendParts } from '../../wire/session.js';
import type { Statement } from '../../wire/statement.js';
import { type Executor, queryOn, rowsOf } from '../../writes/run-writes.js';
import { nextDueByPriority } from './due-by-priority.js';
import { type FlowClaimed, flowClaim, flowClaimIn } from './flow.js';
import { ordinaryClaim, ordinaryClaimIn } from './ordinary.js';
import { claimHeld, claimPlain } from './plain-paths.js';
import { decodingOn, planPlainClaims } from './plain-plans.js';
import { type PlainClaimRow, plainClaimStatement } from './plain-statement.js';

/**
 * The ways a claim reaches the server, named here and chosen by `claimPathOf`:
 * - `transaction`: no pipelined session (PGlite, a client given by the application): the plain claim's statement,
 *   then the ordinary selects for what it left, in one drizzle transaction.
 * - `held`: the plain claim, its transaction held open until the end of the turn so that the pages' pure commits
 *   join it (`plain-paths.ts`, `held-claims.ts`); the ordinary claim for what it left.
 * - `plain`: the plain claim in one round trip, committed at once (`holdClaims: false`); the ordinary claim for
 *   what it left.
 * - `ordinary`: the locking selects, core's plan for each row, then the writes (`ordinary.ts`): the recovery sweep,
 *   and a claim that carries no plain claim.
 */
export type ClaimPath = 'transaction' | 'held' | 'plain' | 'ordinary';

/** The path a claim takes (see `ClaimPath`). */
export function claimPathOf(ctx: PgContext, request: SelectRequest, expired: boolean): ClaimPath {
  if (ctx.session === undefined) return 'transaction';
  if (expired || plainClaimOf(request) === undefined) return 'ordinary';
  return ctx.holdClaims ? 'held' : 'plain';
}

/**
 * `Store.claimDue` (and, with `expired`, `recoverExpired`): the tasks under flow control by the flow claim
 * (`sql/flow.ts`), the others by the path `claimPathOf` chooses.
 */
export async function selectAndApply(ctx: PgContext, request: SelectRequest, expired: boolean): Promise<RunRecord[]> {
  if (expired || request.tasks.length === 0) return claimByPath(ctx, request, expired);
  const byName = tasksByName(request.tasks);
  const flowing = await flowingTasks(ctx, request, byName, FLOW_STATES_MS);
  const claimed = await claimFlowing(ctx, request, flowing);
  const rest = request.tasks.filter((task) => !flowing.has(task.name));
  let limit = request.limit - claimed.length;
  if (rest.length > 0 && limit > 0)
    claimed.push(...(await claimByPath(ctx, { ...request, tasks: rest, limit }, false)));
  limit = request.limit - claimed.length;
  // A claim that came back empty may have met a task put under flow control since the states were read (the flow
  // gate kept its runs out): read them again (at most every few milliseconds) and claim those tasks now. A claim that
  // holds runs answers them at once: a held claim commits at the end of this turn, and the pages it hands out must
  // begin within it to be written with it (the states are read again within `FLOW_STATES_MS` anyway).
  if (claimed.length > 0 || limit <= 0 || rest.length === 0 || ctx.flowStatesAge() < FLOW_RECHECK_MS) return claimed;
  const now = await flowingTasks(ctx, request, tasksByName(rest), 0);
  claimed.push(...(await claimFlowing(ctx, { ...request, limit }, now)));
  return claimed;
}

/** How long the tasks' flow states read by a claim are used again, at most (see `PgContext.flowStates`). */
const FLOW_STATES_MS = 1000;
/** How soon a claim that came back empty reads them again. */
const FLOW_RECHECK_MS = 50;

/**
 * The flow claim of the `flowing` tasks, in a transaction of its own (none: nothing): on the session by the plain
 * claim's statement when there is a session and the request describes a plain claim, else (and when a run taken does
 * not qualify for it) statement after statement.
 */
async function claimFlowing(
  ctx: PgContext,
  request: SelectRequest,
  flowing: ReadonlyMap<string, string[]>,
): Promise<RunRecord[]> {
  if (flowing.size === 0) return [];
  const session = ctx.session;
  const known = (name: string) => ctx.flowStates?.get(`${request.namespace}\u0000${name}`) ?? null;
  const claim = request.plainClaim;
  const onSession = async (): Promise<FlowClaimed> =>
    session === undefined || claim === undefined
      ? { runs: [], long: true }
      : flowClaim(ctx, session, request, claim, flowing, known);
  let claimed = await onSession();
  // A task whose flow lock could not be shared is claimed again at once, taking the lock alone.
  if (claimed.alone) claimed = await onSession();
  const flowed = claimed.runs;
  if (claimed.long) {
    const limit = request.limit - flowed.length;
    const rest = ctx.inTransaction('store.claimDue', (tx) => flowClaimIn(ctx, tx, { ...request, limit }, flowing));
    // Runs a commit already carried are handed out even if the rest fails: the next claim meets it again.
    flowed.push(...(await (flowed.length > 0 ? rest.catch(() => []) : rest)));
  }
  for (const run of flowed) ctx.known.committed(run);
  return flowed;
}

/**
 * The tasks of `byName` that flow control must claim (`needsFlow`), from the task states read at most `maxAgeMs`
 * ago. A stale state is safe: the flow gate keeps every claim outside flow control from a task under it, and the flow
 * claim reads the task's record again under its lock.
 */
async function flowingTasks(
  ctx: PgContext,
  request: SelectRequest,
  byName: Map<string, string[]>,
  maxAgeMs: number,
): Promise<Map<string, string[]>> {
  let states = ctx.flowStatesAge() <= maxAgeMs ? ctx.flowStates : null;
  if (states === null || [...byName.keys()].some((name) => !states?.has(`${request.namespace}\u0000${name}`))) {
    let records: Map<string, TaskRecord>;
    try {
      records = await taskRecords(ctx.live(), ctx.tables, request.namespace, [...byName.keys()]);
    } catch (error) {
      throw classify(error, new OutcomeTracker(), 'store.claimDue', {});
    }
    states = new Map();
    for (const name of byName.keys()) states.set(`${request.namespace}\u0000${name}`, flowStateOf(records.get(name)));
    ctx.rememberFlowStates(states);
  }
  const flowing = new Map<string, string[]>();
  for (const [name, versions] of byName) {
    if (needsFlow(states.get(`${request.namespace}\u0000${name}`) ?? null, request.now)) flowing.set(name, versions);
  }
  return flowing;
}

/** A claim by the path `claimPathOf` chooses. */
async function claimByPath(ctx: PgContext, request: SelectRequest, expired: boolean): Promise<RunRecord[]> {
  const session = ctx.session;
  const path = claimPathOf(ctx, request, expired);
  const written =
    path === 'transaction' || session === undefined
      ? await ctx.inTransaction('store.claimDue', (tx) => claimInTransaction(ctx, tx, request, expired))
      : path === 'ordinary'
        ? await ordinaryClaim(ctx, session, request, expired)
        : await claimPlainFirst(ctx, session, request, path === 'held');
  for (const run of written) ctx.known.committed(run);
  return written;
}

/** The request's plain claim, when the one-statement claim can apply it (see `plain-statement.ts`). */
function plainClaimOf(request: SelectRequest): PlainClaim | undefined {
  return request.tasks.length > 0 ? request.plainClaim : undefined;
}

/** The `transaction` path. */
async function claimInTransaction(
  ctx: PgContext,
  tx: Executor,
  request: SelectRequest,
  expired: boolean,
): Promise<RunRecord[]> {
  const claim = expired ? undefined : plainClaimOf(request);
  if (claim === undefined) return ordinaryClaimIn(ctx, tx, request, expired);
  const shared = ctx.sharedColumns.expected(request);
  const statement = plainClaimStatement(ctx.tables, request, claim, shared);
  const rows = await rowsOf<PlainClaimRow>(tx, statement);
  const plain = await planPlainClaims(request, claim, rows, shared, decodingOn(ctx, queryOn(tx)));
  const claimed = plain.claimed.map((w) => w.run);
  if (plain.leftover === 0 || claimed.length >= request.limit) return claimed;
  // The rows it left stay locked by this transaction: the ordinary selects take them again.
  const rest = await ordinaryClaimIn(ctx, tx, { ...request, limit: request.limit - claimed.length }, false);
  return [...claimed, ...rest];
}

/**
 * The `held` and `plain` paths: the plain claim, then the ordinary claim for any selected run that did not qualify
 * (a deadline passed, a time trigger fired), in the room left.
 */
async function claimPlainFirst(
  ctx: PgContext,
  session: Session,
  request: SelectRequest,
  hold: boolean,
): Promise<RunRecord[]> {
  const claim = plainClaimOf(request) as PlainClaim;
  const plain = hold ? await claimHeld(ctx, session, request, claim) : await claimPlain(ctx, session, request, claim);
  const runs = plain.claimed.map((w) => w.run);
  if (plain.leftover === 0 || runs.length >= request.limit) return runs;
  // The runs claimed above are committed: if the rest fails they are still handed out, and the next claim meets the
  // rows left (and the error) again.
  if (runs.length === 0) return ordinaryClaim(ctx, session, request, false);
  const rest = await ordinaryClaim(ctx, session, { ...request, limit: request.limit - runs.length }, false).catch(
    () => [],
  );
  return [...runs, ...rest];
}

/**
 * `Store.nextDueAt`: the earliest due time among claimable runs of the given tasks. It reads once the claims this
 * store holds open have ended: until they commit, the runs they claimed are still `pending` in the table and would
 * read as due now, so the worker would claim again and again and find them locked.
 */
export async function nextDueAt(ctx: PgContext, namespace: string, tasks: readonly TaskKey[]): Promise<number | null> {
  await within(
    ctx.held.allEnded().then(() => true),
    WAIT_BOUND_MS,
  );
  const text = nextDueByPriority({
    runs: ctx.tables.runs,
    bands: 'b',
    namespace: '$1::text',
    taskName: '$2::text',
    taskVersion: '$3::text',
  });
  const reads: Statement[] = tasks.map((task) => ({ text, params: [namespace, task.name, task.version] }));
  const dues: unknown[] = [];
  const session = ctx.session;
  if (session === undefined) {
    for (const read of reads) dues.push((await rowsOf<{ due: unknown }>(ctx.live(), read))[0]?.due);
  } else {
    // After every claim that left slots free: one message of prepared reads, not one planned query per task.
    const results = await session((send) => sendParts(send, reads.map(preparedCall)));
    for (const rows of results) dues.push((rows[0] as { due: unknown } | undefined)?.due);
  }
  let earliest: number | null = null;
  for (const value of dues) {
    const due = value === null || value === undefined ? null : Number(value);
    if (due !== null && (earliest === null || due < earliest)) earliest = due;
  }
  return earliest;
}
