import {
  flowPlanOf,
  flowStateOf,
  type PlainClaim,
  type RunRecord,
  type RunRow,
  type SelectRequest,
  type TaskFlowState,
  type TaskRow,
} from '@docket/core/store';
import type { PgContext } from '../../context.js';
import { taskRecordsOf, taskRowsStatement } from '../../flow/task-rows.js';
import { type PreparedCall, preparedCall } from '../../wire/prepared-calls.js';
import { BEGIN, type Send, type Session, sendParts, UNFLUSHED_COMMIT } from '../../wire/session.js';
import type { Statement } from '../../wire/statement.js';
import { onSession } from '../../writes/family.js';
import { applyLockedWrites, type Executor, type PendingWrite, queryOn, rowsOf } from '../../writes/run-writes.js';
import { type LockedTask, noteGroups, type Read, scopeReads } from './flow-reads.js';
import { flowLockStatement, SHARED_TAKE_MAX, seatOf, sharedLockStatements } from './flow-sharing.js';
import {
  dueStatements,
  type FlowReads,
  flowReadsOf,
  readsCover,
  recordStatements,
  takenRows,
} from './flow-statements.js';
import { plannedWrites } from './ordinary.js';
import { failHeld, runHeldClaim } from './plain-paths.js';
import { decodingOn, planPlainClaims } from './plain-plans.js';
import { type ClaimSource, type PlainClaimRow, plainClaimStatement } from './plain-statement.js';

/** Core's plan for a locked task within the request's limit (`flowPlanOf`). */
const planFor = (request: SelectRequest, task: LockedTask) =>
  flowPlanOf(
    task.state,
    () => task.scope,
    () => task.turns,
    request,
  );

/**
 * The flow claim of the request's flow-controlled tasks in an open transaction, statement after statement (the path
 * without a session, and a claim that also writes other runs of a family): each task under its flow lock, its record
 * read again under it, core's plan (`flowPlanOf`) from its leases, claims and groups, the due runs the plan takes
 * locked and written, and the claims its rates count recorded. Answers the runs written.
 */
export async function flowClaimIn(
  ctx: PgContext,
  tx: Executor,
  request: SelectRequest,
  tasks: ReadonlyMap<string, string[]>,
): Promise<RunRecord[]> {
  const written: RunRecord[] = [];
  const read: Read = async (statements) => {
    const rows: unknown[][] = [];
    for (const statement of statements) rows.push(await rowsOf(tx, statement));
    return rows;
  };
  for (const name of [...tasks.keys()].sort()) {
    const limit = request.limit - written.length;
    if (limit <= 0) break;
    await read([flowLockStatement(request.namespace, name)]);
    const [records = []] = await read([taskRowsStatement(ctx.tables, request.namespace, [name])]);
    const state = flowStateOf(taskRecordsOf(records as TaskRow[]).get(name));
    if (state === null) continue;
    const scopes = scopeReads(ctx, request, name, tasks.get(name) ?? [], flowReadsOf(state, request.now));
    const task = await scopes.locked(state, await read(scopes.statements), read);
    const plan = planFor({ ...request, limit }, task);
    const reads = dueStatements(ctx.tables, request, task.name, task.versions, plan);
    const rows = takenRows(plan, (await read(reads)) as RunRow[][]);
    noteGroups(ctx, request, task, plan, rows, limit);
    await ctx.tables.versions.load(queryOn(tx), rows);
    const writes = plannedWrites(ctx.tables.versions, request, rows);
    await applyLockedWrites(tx, ctx.tables, writes);
    const runs = writes.map((w) => w.write.run);
    await read(recordStatements(ctx.tables, request.namespace, name, state, runs, request.now));
    written.push(...runs);
  }
  return written;
}

/**
 * What `flowClaim` answers: the runs it claimed, whether the rest must be claimed the long way (`flowClaimIn`), and
 * whether it claimed nothing because a task's lock could not be shared (`alone`: claim again, taking it alone).
 */
export interface FlowClaimed {
  runs: RunRecord[];
  long: boolean;
  alone?: boolean;
}

/** What the flow claim's selects took: each run's row as selected with core's claim, and the claims to record. */
interface Taken {
  writes: PendingWrite[];
  records: Statement[];
  long: boolean;
}

/**
 * The flow claim on a session: `BEGIN`, every task's flow lock, record and scope in one message (the scope read for
 * the task's state as last known, read again when the record says otherwise); then for each task the plain claim's
 * statement over the due runs its plan takes (`ClaimSource`). Held (`holdClaims`, the default), that statement only
 * locks and selects the rows, and the runs are handed out while the transaction, and with it the flow lock, stays
 * open to the end of this turn: the pages that settle within it are written with their claims, the claims the rates
 * count are recorded, and it commits (`commitHeld`), as the plain held claim does. Not held, the statement writes the
 * claims, and the records and `COMMIT` follow. `long` when a run taken is not claimed plainly (a deadline passed, a
 * time trigger fired): the transaction is rolled back and the caller claims by `flowClaimIn`. `known(name)` is the
 * task's state as last read, if any.
 */
export function flowClaim(
  ctx: PgContext,
  session: Session,
  request: SelectRequest,
  claim: PlainClaim,
  tasks: ReadonlyMap<string, string[]>,
  known: (name: string) => TaskFlowState | null,
): Promise<FlowClaimed> {
  return runHeldClaim<FlowClaimed>(
    ctx,
    session,
    claim,
    async (send, outcome, answer) => {
      const read = await lockAndRead(ctx, send, request, tasks, known);
      const locked = read.map((task) => ctx.flowSharing.admit(request, task));
      if (locked.includes(null)) {
        await send(() => ({ text: 'ROLLBACK', prepares: [] }));
        answer({ runs: [], long: false, alone: true });
        return null;
      }
      const taken = await takeAll(ctx, send, request, claim, locked as LockedTask[], ctx.holdClaims);
      const runs = taken.writes.map((w) => w.write.run);
      if (taken.long) {
        await send(() => ({ text: 'ROLLBACK', prepares: [] }));
        answer({ runs: [], long: true });
        return null;
      }
      // A rate counts these claims: its records must be as durable as the runs it lets through.
      const flush = read.some((task) => task.state.flow?.rate !== undefined || task.state.flow?.group?.rate);
      const records = taken.records.map(preparedCall);
      if (!ctx.holdClaims || runs.length === 0) {
        outcome.committing();
        await sendParts(send, [...(flush ? [] : [UNFLUSHED_COMMIT]), ...records, 'COMMIT']);
        answer({ runs, long: false });
        return null;
      }
      const batch = ctx.held.hold(taken.writes);
      answer({ runs, long: false });
      return { batch, records, flush };
    },
    // The claims and the records were rolled back together: no run was claimed, and no limit was passed.
    (batch, error, outcome) => failHeld(ctx, batch, error, outcome),
  );
}

/** Each locked task's runs within the request's limit (`claimPlainly`), and the claims its rates count. */
async function takeAll(
  ctx: PgContext,
  send: Send,
  request: SelectRequest,
  claim: PlainClaim,
  locked: readonly LockedTask[],
  hold: boolean,
): Promise<Taken> {
  const taken: Taken = { writes: [], records: [], long: false };
  for (const task of locked) {
    // A claim that shares the task's lock takes no more than every other sharer counts it for.
    const limit = Math.min(request.limit - taken.writes.length, task.seat === undefined ? Infinity : SHARED_TAKE_MAX);
    if (limit <= 0) break;
    const writes = await claimPlainly(ctx, send, { ...request, limit }, claim, task, hold);
    if (writes === null) return { ...taken, long: true };
    taken.writes.push(...writes);
    const runs = writes.map((w) => w.write.run);
    taken.records.push(...recordStatements(ctx.tables, request.namespace, task.name, task.state, runs, request.now));
  }
  return taken;
}

/**
 * One locked task's claim within the request's limit: core's plan (`flowPlanOf`), then the plain claim's statement
 * over the due runs it takes, from the whole task or group after group; with `hold`, the statement locks and selects
 * the rows without writing them. Answers each run's row as selected with core's claim, or `null` when a row taken
 * does not qualify for the plain claim (see `flowClaim`).
 */
async function claimPlainly(
  ctx: PgContext,
  send: Send,
  request: SelectRequest,
  claim: PlainClaim,
  task: LockedTask,
  hold: boolean,
): Promise<PendingWrite[] | null> {
  const plan = planFor(request, task);
  if (plan.take === 0 || (plan.mode === 'groups' && plan.groups.length === 0)) {
    noteGroups(ctx, request, task, plan, [], request.limit);
    return [];
  }
  const tasks = task.versions.map((version) => ({ name: task.name, version }));
  const taking = { ...request, tasks, limit: plan.take };
  const source: ClaimSource = plan.mode === 'all' ? { kind: 'ungated' } : { kind: 'groups', turns: plan.groups };
  const shared = ctx.sharedColumns.expected(taking);
  const statement = plainClaimStatement(ctx.tables, taking, claim, shared, hold, source);
  const [rows = []] = await sendParts(send, [preparedCall(statement)]);
  noteGroups(ctx, request, task, plan, rows as PlainClaimRow[], request.limit);
  const result = await planPlainClaims(
    taking,
    claim,
    rows as PlainClaimRow[],
    shared,
    decodingOn(ctx, onSession(send)),
  );
  if (result.leftover > 0) return null;
  return result.claimed.map((write, i) => ({ current: result.before[i] as RunRecord, write }));
}

/**
 * The first round trip of `flowClaim` (and a second when a record asks for other reads than the state last known):
 * the tasks locked in name order, alone or shared as `ctx.flowSharing` says, each with its seat, state, scope and
 * turns. A task with no record is left out.
 */
async function lockAndRead(
  ctx: PgContext,
  send: Send,
  request: SelectRequest,
  tasks: ReadonlyMap<string, string[]>,
  known: (name: string) => TaskFlowState | null,
): Promise<LockedTask[]> {
  const { namespace, now } = request;
  const names = [...tasks.keys()].sort();
  const guesses = names.map((name) => flowReadsOf(known(name), now));
  const reads = names.map((name, i) => scopeReads(ctx, request, name, tasks.get(name) ?? [], guesses[i] as FlowReads));
  const locks = names.map((name) =>
    ctx.flowSharing.shares(namespace, name)
      ? sharedLockStatements(namespace, name)
      : [flowLockStatement(namespace, name)],
  );
  const parts: PreparedCall[][] = names.map((name, i) =>
    [...(locks[i] ?? []), taskRowsStatement(ctx.tables, namespace, [name]), ...(reads[i]?.statements ?? [])].map(
      preparedCall,
    ),
  );
  const results = await sendParts(send, [...BEGIN, ...parts.flat()]);
  const read: Read = (statements) => sendParts(send, statements.map(preparedCall));
  let at = BEGIN.length;
  const locked: LockedTask[] = [];
  for (const [i, name] of names.entries()) {
    const lockCount = locks[i]?.length ?? 1;
    const seat = lockCount > 1 ? seatOf(results[at + lockCount - 1]) : undefined;
    const rows = results.slice(at + lockCount + 1, at + (parts[i]?.length ?? 0));
    const state = flowStateOf(taskRecordsOf((results[at + lockCount] ?? []) as TaskRow[]).get(name));
    at += parts[i]?.length ?? 0;
    if (state === null) continue;
    const needed = flowReadsOf(state, now);
    const task = readsCover(guesses[i] as FlowReads, needed)
      ? await (reads[i] as ReturnType<typeof scopeReads>).locked(state, rows, read)
      : await relocked(ctx, request, name, tasks.get(name) ?? [], needed, state, read);
    locked.push(seat === undefined ? task : { ...task, seat });
  }
  return locked;
}

/** A locked task read again for the reads its record asks for (`needed`), when the state last known asked for others. */
async function relocked(
  ctx: PgContext,
  request: SelectRequest,
  name: string,
  versions: readonly string[],
  needed: FlowReads,
  state: TaskFlowState,
  read: Read,
): Promise<LockedTask> {
  const again = scopeReads(ctx, request, name, versions, needed);
  return again.locked(state, await read(again.statements), read);
}
