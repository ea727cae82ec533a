import { DocketError } from '@docket/core';
import type { PlainClaim, RunRecord, SelectRequest } from '@docket/core/store';
import type { PgContext } from '../../context.js';
import { classify, OutcomeTracker, statementRefused } from '../../errors.js';
import { notifyText, type PreparedCall, preparedCall } from '../../wire/prepared-calls.js';
import {
  BEGIN,
  type Send,
  type Session,
  sendParts,
  UNFLUSHED_COMMIT,
  writeRowsInOneMessage,
} from '../../wire/session.js';
import { familyWrites, followFamilies, onSession } from '../../writes/family.js';
import {
  applyRunWrites,
  type PendingWrite,
  queryOn,
  runWritesStatement,
  wakeNamespaces,
} from '../../writes/run-writes.js';
import type { HeldBatch } from './held-claims.js';
import { decodingOn, type PlainClaimResult, planPlainClaims } from './plain-plans.js';
import { type PlainClaimRow, plainClaimStatement } from './plain-statement.js';

/**
 * The plain claim in one round trip: `BEGIN`, the statement, `COMMIT` without waiting for the flush (a claim writes
 * no callback event and leaves nothing claimable, as in `selectAndPlan`).
 */
export async function claimPlain(
  ctx: PgContext,
  session: Session,
  request: SelectRequest,
  claim: PlainClaim,
): Promise<PlainClaimResult> {
  const shared = ctx.sharedColumns.expected(request);
  const call = preparedCall(plainClaimStatement(ctx.tables, request, claim, shared));
  const outcome = new OutcomeTracker();
  outcome.committing();
  try {
    const rows = (await writeRowsInOneMessage(session, call, [], [...BEGIN, UNFLUSHED_COMMIT])) as PlainClaimRow[];
    return await planPlainClaims(request, claim, rows, shared, decodingOn(ctx, queryOn(ctx.live())));
  } catch (error) {
    throw classify(error, outcome, 'store.claimDue', {});
  }
}

/** What the first step of a held claim leaves for the end of the turn: the batch it holds, and what its commit adds. */
export interface HeldTurn {
  batch: HeldBatch;
  /** The flow claim's records of the claims its rates count, written in the same commit. */
  records?: readonly PreparedCall[];
  /** Whether the commit waits for the flush even with no settle folded in. */
  flush?: boolean;
}

/**
 * A claim whose transaction is held open (see `held-claims.ts`), on the session: `take` locks and selects the runs,
 * answers them through `answer`, and hands back the batch it holds, or `null` when it committed (or rolled back) at
 * once. Once this turn of the event loop ends, the pages whose pure commit plans arrived meanwhile are written with
 * the claims and the transaction commits (`commitHeld`). A failure before a batch is held refuses the claim; after,
 * `failed` answers the batch's folded plans.
 */
export function runHeldClaim<T>(
  ctx: PgContext,
  session: Session,
  claim: PlainClaim,
  take: (send: Send, outcome: OutcomeTracker, answer: (value: T) => void) => Promise<HeldTurn | null>,
  failed: (batch: HeldBatch, error: unknown, outcome: OutcomeTracker) => void,
): Promise<T> {
  return new Promise<T>((answer, refuse) => {
    let batch: HeldBatch | null = null;
    const outcome = new OutcomeTracker();
    session(async (send) => {
      const turn = await take(send, outcome, answer);
      if (turn === null) return;
      batch = turn.batch;
      // Every page whose handler settled in this turn has sent its commit plan by the time this resolves.
      await new Promise<void>((resolve) => setImmediate(resolve));
      await commitHeld(ctx, send, batch, claim, outcome, turn);
      ctx.held.committed(batch, ctx.known);
    }).catch((error) => {
      if (batch === null) refuse(classify(error, outcome, 'store.claimDue', {}));
      else failed(batch, error, outcome);
    });
  });
}

/** A held batch whose transaction failed, or whose outcome is unknown: every folded plan gets the classified error. */
export function failHeld(ctx: PgContext, batch: HeldBatch, error: unknown, outcome: OutcomeTracker): void {
  ctx.held.failed(batch, ctx.known, (runId) => classify(error, outcome, 'store.transact', { runId }));
}

/**
 * The plain claim with its transaction held open (`runHeldClaim`): `BEGIN` and the locking select in one round trip,
 * core's plans, the runs handed out, and the claims written with the pages that settle in this turn. When the server
 * refuses that commit for one of several runs, each run's write is tried again alone.
 */
export function claimHeld(
  ctx: PgContext,
  session: Session,
  request: SelectRequest,
  claim: PlainClaim,
): Promise<PlainClaimResult> {
  return runHeldClaim<PlainClaimResult>(
    ctx,
    session,
    claim,
    (send, outcome, answer) => selectAndHold(ctx, send, request, claim, outcome, answer),
    (batch, error, outcome) => {
      if (!statementRefused(error) || batch.runs.length < 2 || batch.writes === null) {
        failHeld(ctx, batch, error, outcome);
        return;
      }
      void ctx.held.alone(
        batch,
        ctx.known,
        (pending) => writeAlone(ctx, pending),
        (runId, cause) =>
          cause === null ? lostClaim(runId) : classify(cause, new OutcomeTracker(), 'store.transact', { runId }),
      );
    },
  );
}

/** One run's claim and folded settle in a transaction of its own, guarded by its revision: whether it landed. */
async function writeAlone(ctx: PgContext, pending: PendingWrite): Promise<boolean> {
  const landed = await ctx.transaction(new OutcomeTracker(), (tx) => applyRunWrites(tx, ctx.tables, [pending]));
  return landed.has(pending.current.runId);
}

/** What a folded settle gets when its claim, written again alone, found the run moved on (claimed by another). */
function lostClaim(runId: string): DocketError {
  return new DocketError('STORAGE_FAILURE', 'the claim was rolled back with its batch and the run moved on', {
    operation: 'store.transact',
    runId,
  });
}

/**
 * The first round trip of `claimHeld`: `BEGIN` and the locking select, then core's plans. Answers the claim through
 * `answer` and the batch it holds, or `null` when it committed at once (no run claimed, or rows left for the
 * ordinary path). The rows read end here, before the transaction's second round trip (see `selectAndPlan`).
 */
async function selectAndHold(
  ctx: PgContext,
  send: Send,
  request: SelectRequest,
  claim: PlainClaim,
  outcome: OutcomeTracker,
  answer: (result: PlainClaimResult) => void,
): Promise<HeldTurn | null> {
  const shared = ctx.sharedColumns.expected(request);
  const select = preparedCall(plainClaimStatement(ctx.tables, request, claim, shared, true));
  const selected = await sendParts(send, [...BEGIN, select]);
  const rows = selected[BEGIN.length] as PlainClaimRow[];
  const plain = await planPlainClaims(request, claim, rows, shared, decodingOn(ctx, onSession(send)));
  const writes = plain.claimed.map((write, i) => ({ current: plain.before[i] as RunRecord, write }));
  if (writes.length === 0 || plain.leftover > 0) {
    const parts: (string | PreparedCall)[] = [UNFLUSHED_COMMIT];
    if (writes.length > 0) parts.push(preparedCall(runWritesStatement(ctx.tables, writes, { allLocked: true })));
    outcome.committing();
    await sendParts(send, [...parts, 'COMMIT']);
    for (const w of writes) ctx.known.committed(w.write.run);
    answer(plain);
    return null;
  }
  const batch = ctx.held.hold(writes);
  answer(plain);
  return { batch };
}

/**
 * Ends a held claim: one write of every run it holds (from the row selected to its latest record), the flow claim's
 * `records` if any, the notifications, and `COMMIT`, which waits for the flush only when a settle was folded in or
 * `flush` asks for it; one message. When a folded settle settles a child, the write goes first, then what it leads
 * to (its parent counted, and moved when the count calls for it, `followFamilies`) on the same connection, then the
 * rest.
 */
export async function commitHeld(
  ctx: PgContext,
  send: Send,
  batch: HeldBatch,
  claim: PlainClaim,
  outcome: OutcomeTracker,
  { records = [], flush = false }: { records?: readonly PreparedCall[]; flush?: boolean } = {},
): Promise<void> {
  const all = ctx.held.close(batch);
  const durability = flush || ctx.held.fusedAny(batch) ? [] : [UNFLUSHED_COMMIT];
  const write = preparedCall(runWritesStatement(ctx.tables, all, { allLocked: true, claimedFirst: claim }));
  const wake = wakeNamespaces(all);
  const family = familyWrites(all, new Set(all.map((w) => w.current.runId)));
  if (family.length > 0) {
    await sendParts(send, [...durability, write]);
    for (const namespace of await followFamilies(onSession(send), ctx.tables, family)) wake.add(namespace);
  }
  const notify = [...wake].map((ns) => notifyText(ctx.channel, ns));
  outcome.committing();
  const end = [...records, ...notify, 'COMMIT'];
  await sendParts(send, family.length > 0 ? end : [...durability, write, ...end]);
}
