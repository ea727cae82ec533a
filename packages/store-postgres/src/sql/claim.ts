import type { PlainClaim, RunRecord, RunRow, SelectRequest, TaskKey } from '@docket/core/store';
import { claimRankOfRow, compareClaimOrder, rowToRun } from '@docket/core/store';
import type { PgContext } from '../context.js';
import { classify, OutcomeTracker } from '../errors.js';
import { claimHeld, claimPlain } from '../fast/claim-held.js';
import {
  isPlainClaim,
  type PlainClaimRow,
  plainClaimStatement,
  planPlainClaims,
  RUN_COLUMNS,
} from '../fast/plain-claim-statement.js';
import { notifyText, type PreparedCall, preparedCall } from '../fast/prepared-calls.js';
import { BEGIN, compose, type Send, type Session, sendParts, UNFLUSHED_COMMIT } from '../fast/session.js';
import { dueByPriority, nextDueByPriority } from './due-by-priority.js';
import { applyLockedWrites, type PendingWrite, rowsOf, runWritesStatement, wakeNamespaces } from './run-writes.js';
import type { Statement } from './statement.js';

/** The statements that select (and lock) a claim's candidates: one per task, or the expired leases. */
function candidateQueries(ctx: PgContext, request: SelectRequest, expired: boolean): Statement[] {
  if (expired) {
    return [
      {
        text: `SELECT ${RUN_COLUMNS} FROM ${ctx.tables.runs} WHERE namespace = $1 AND lease_expires_at IS NOT NULL
          AND lease_expires_at <= $2 ORDER BY lease_expires_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
        params: [request.namespace, request.now, request.limit],
      },
    ];
  }
  const due = dueByPriority({
    runs: ctx.tables.runs,
    columns: RUN_COLUMNS,
    bands: 'b',
    namespace: '$1::text',
    taskName: '$2::text',
    taskVersion: '$3::text',
    now: '$4::double precision',
    limit: '$5::integer',
  });
  return request.tasks.map((task) => ({
    text: `WITH RECURSIVE ${due.bands} ${due.select}`,
    params: [request.namespace, task.name, task.version, request.now, request.limit],
  }));
}

/** Core's plan for each candidate, up to the request's limit. */
function planCandidates(request: SelectRequest, candidates: RunRow[]): PendingWrite[] {
  // Several tasks' candidates come one task after another: highest priority first, then earliest due, across them.
  if (request.tasks.length > 1) {
    candidates.sort((a, b) => compareClaimOrder(claimRankOfRow(a), claimRankOfRow(b)));
  }
  const writes: PendingWrite[] = [];
  for (const row of candidates) {
    if (writes.length >= request.limit) break;
    const current = rowToRun(row);
    const write = request.plan(current);
    if (write !== null) writes.push({ current, write });
  }
  return writes;
}

export async function selectAndApply(ctx: PgContext, request: SelectRequest, expired: boolean): Promise<RunRecord[]> {
  const session = ctx.session;
  const written =
    session === undefined
      ? await ctx.inTransaction('store.claimDue', async (tx) => {
          let claimed: RunRecord[] = [];
          let ordinary = request;
          const claim = expired ? undefined : plainClaimOf(request);
          if (claim !== undefined) {
            const shared = ctx.sharedColumns.expected(request);
            const plain = planPlainClaims(
              request,
              claim,
              await rowsOf<PlainClaimRow>(tx, plainClaimStatement(ctx.tables, request, claim, shared)),
              shared,
              ctx.sharedColumns,
            );
            claimed = plain.claimed.map((w) => w.run);
            if (plain.leftover === 0 || claimed.length >= request.limit) return claimed;
            // The rows it left stay locked by this transaction: the ordinary selects below take them again.
            ordinary = { ...request, limit: request.limit - claimed.length };
          }
          const candidates: RunRow[] = [];
          for (const query of candidateQueries(ctx, ordinary, expired))
            candidates.push(...(await rowsOf<RunRow>(tx, query)));
          const writes = planCandidates(ordinary, candidates);
          await applyLockedWrites(tx, ctx.tables, writes);
          return [...claimed, ...writes.map((w) => w.write.run)];
        })
      : await claimInSession(ctx, session, request, expired);
  for (const run of written) ctx.known.committed(run);
  return written;
}

/** The request's plain claim, when the one-statement claim can apply it (see `fast/plain-claim-statement.ts`). */
function plainClaimOf(request: SelectRequest): PlainClaim | undefined {
  return request.tasks.length > 0 ? request.plainClaim : undefined;
}

/**
 * A claim on one connection: the due runs that qualify for the plain claim (one round trip, `claimPlain`), and the
 * ordinary claim for any selected run that did not: `BEGIN` and the locking selects, then (after core's plans) the writes, their notifications and `COMMIT`,
 * all through statements prepared once per connection. A transaction of plain claims only does not wait for the
 * server's flush (see `UNFLUSHED_COMMIT`).
 */
async function claimInSession(
  ctx: PgContext,
  session: Session,
  request: SelectRequest,
  expired: boolean,
): Promise<RunRecord[]> {
  if (!expired) {
    const claim = plainClaimOf(request);
    if (claim !== undefined) {
      const plain = ctx.holdClaims
        ? await claimHeld(ctx, session, request, claim)
        : await claimPlain(ctx, session, request, claim);
      const runs = plain.claimed.map((w) => w.run);
      if (plain.leftover === 0 || runs.length >= request.limit) return runs;
      // What it left (a deadline passed, a time trigger fired) core plans the ordinary way, in the room left. The
      // runs claimed above are committed: if this fails they are still handed out, and the next claim meets the
      // rows left (and the error) again.
      if (runs.length === 0) return ordinaryClaim(ctx, session, request, false);
      const rest = await ordinaryClaim(ctx, session, { ...request, limit: request.limit - runs.length }, false).catch(
        () => [],
      );
      return [...runs, ...rest];
    }
  }
  return ordinaryClaim(ctx, session, request, expired);
}

/** The ordinary claim: the locking selects, core's plan for each row, then the writes (two round trips). */
async function ordinaryClaim(
  ctx: PgContext,
  session: Session,
  request: SelectRequest,
  expired: boolean,
): Promise<RunRecord[]> {
  const outcome = new OutcomeTracker();
  try {
    return await session(async (send) => {
      const claim = await selectAndPlan(ctx, send, request, expired);
      outcome.committing();
      if (claim === null) {
        await send(() => ({ text: 'COMMIT', prepares: [] }));
        return [];
      }
      await send((prepared) => compose(prepared, claim.parts));
      return claim.runs;
    });
  } catch (error) {
    throw classify(error, outcome, 'store.claimDue', {});
  }
}

/**
 * The first round trip of `claimInSession`: `BEGIN` and the locking selects, then core's plans and the message that
 * writes them (`null` when core planned nothing). The rows read and the records decoded from them end here, before
 * the second round trip: with hundreds of runs claimed at once, keeping them alive through it only fed the
 * collector.
 */
async function selectAndPlan(
  ctx: PgContext,
  send: Send,
  request: SelectRequest,
  expired: boolean,
): Promise<{ parts: (string | PreparedCall)[]; runs: RunRecord[] } | null> {
  const selects = candidateQueries(ctx, request, expired).map(preparedCall);
  const selected = await sendParts(send, [...BEGIN, ...selects]);
  const writes = planCandidates(request, selected.slice(BEGIN.length).flat() as RunRow[]);
  if (writes.length === 0) return null;
  const write = preparedCall(runWritesStatement(ctx.tables, writes, { allLocked: true }));
  const notify = [...wakeNamespaces(writes)].map((ns) => notifyText(ctx.channel, ns));
  const durability = writes.every((w) => isPlainClaim(w.write)) ? [UNFLUSHED_COMMIT] : [];
  return { parts: [...durability, write, ...notify, 'COMMIT'], runs: writes.map((w) => w.write.run) };
}

/** `Store.nextDueAt`: the earliest due time among claimable runs of the given tasks. */
export async function nextDueAt(ctx: PgContext, namespace: string, tasks: readonly TaskKey[]): Promise<number | null> {
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
