import type { RunRecord, RunRow, SelectRequest } from '@docket/core/store';
import { claimRankOfRow, compareClaimOrder, touchesFamily } from '@docket/core/store';
import type { PgContext } from '../../context.js';
import { classify, OutcomeTracker } from '../../errors.js';
import type { PgTaskVersions } from '../../task-versions.js';
import { notifyText, type PreparedCall, preparedCall } from '../../wire/prepared-calls.js';
import { BEGIN, compose, type Send, type Session, sendParts, UNFLUSHED_COMMIT } from '../../wire/session.js';
import type { Statement } from '../../wire/statement.js';
import { onSession } from '../../writes/family.js';
import {
  applyLockedWrites,
  type Executor,
  type PendingWrite,
  queryOn,
  rowsOf,
  runWritesStatement,
  wakeNamespaces,
} from '../../writes/run-writes.js';
import { dueByPriority, flowGate, TASK_DUE_PARAMS } from './due-by-priority.js';
import { isPlainClaim, RUN_COLUMNS } from './plain-statement.js';

/** The statements that select (and lock) a claim's candidates: one per task, or the expired leases. */
export function candidateQueries(ctx: PgContext, request: SelectRequest, expired: boolean): Statement[] {
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
    ...TASK_DUE_PARAMS,
    gate: flowGate(ctx.tables.tasks, '$1::text', '$2::text', '$4::double precision'),
  });
  return request.tasks.map((task) => ({
    text: `WITH RECURSIVE ${due.bands} ${due.select}`,
    params: [request.namespace, task.name, task.version, request.now, request.limit],
  }));
}

/** Core's plan for each candidate (their versions loaded), up to the request's limit. */
function planCandidates(versions: PgTaskVersions, request: SelectRequest, candidates: RunRow[]): PendingWrite[] {
  // Several tasks' candidates come one task after another: highest priority first, then earliest due, across them.
  if (request.tasks.length > 1) {
    candidates.sort((a, b) => compareClaimOrder(claimRankOfRow(a), claimRankOfRow(b)));
  }
  return plannedWrites(versions, request, candidates, request.limit);
}

/**
 * Core's write for each row in turn, up to `limit` writes (a row whose run core leaves alone is not written); the
 * rows' versions are loaded (`PgTaskVersions.load`).
 */
export function plannedWrites(
  versions: PgTaskVersions,
  request: SelectRequest,
  rows: readonly RunRow[],
  limit = rows.length,
): PendingWrite[] {
  const writes: PendingWrite[] = [];
  for (const row of rows) {
    if (writes.length >= limit) break;
    const current = versions.runOf(row);
    const write = request.plan(current);
    if (write !== null) writes.push({ current, write });
  }
  return writes;
}

/**
 * The ordinary claim inside an open transaction (the path without a session): the locking selects, core's plan for
 * each row, then the writes.
 */
export async function ordinaryClaimIn(
  ctx: PgContext,
  tx: Executor,
  request: SelectRequest,
  expired: boolean,
): Promise<RunRecord[]> {
  const candidates: RunRow[] = [];
  for (const query of candidateQueries(ctx, request, expired)) candidates.push(...(await rowsOf<RunRow>(tx, query)));
  await ctx.tables.versions.load(queryOn(tx), candidates);
  const writes = planCandidates(ctx.tables.versions, request, candidates);
  await applyLockedWrites(tx, ctx.tables, writes);
  return writes.map((w) => w.write.run);
}

/** The ordinary claim: the locking selects, core's plan for each row, then the writes (two round trips). */
export async function ordinaryClaim(
  ctx: PgContext,
  session: Session,
  request: SelectRequest,
  expired: boolean,
): Promise<RunRecord[]> {
  const outcome = new OutcomeTracker();
  let claimed: RunRecord[] | 'family';
  try {
    claimed = await session(async (send) => {
      const claim = await selectAndPlan(ctx, send, request, expired);
      outcome.committing();
      if (claim === null || claim === 'family') {
        await send(() => ({ text: 'COMMIT', prepares: [] }));
        return claim === null ? [] : 'family';
      }
      await send((prepared) => compose(prepared, claim.parts));
      return claim.runs;
    });
  } catch (error) {
    throw classify(error, outcome, 'store.claimDue', {});
  }
  if (claimed !== 'family') return claimed;
  // A claim that ends a run with a parent or children (a deadline passed) writes those runs too: in a transaction
  // that can read them, selected again.
  return ctx.inTransaction('store.claimDue', (tx) => ordinaryClaimIn(ctx, tx, request, expired));
}

/**
 * The first round trip of `claimInSession`: `BEGIN` and the locking selects, then core's plans and the message that
 * writes them (`null` when core planned nothing). The rows read and the records decoded from them end here, before
 * the second round trip: with hundreds of runs claimed at once, keeping them alive through it only fed the
 * collector. `'family'` when a write also writes other runs (`touchesFamily`): nothing is written here then.
 */
async function selectAndPlan(
  ctx: PgContext,
  send: Send,
  request: SelectRequest,
  expired: boolean,
): Promise<{ parts: (string | PreparedCall)[]; runs: RunRecord[] } | null | 'family'> {
  const selects = candidateQueries(ctx, request, expired).map(preparedCall);
  const selected = await sendParts(send, [...BEGIN, ...selects]);
  const rows = selected.slice(BEGIN.length).flat() as RunRow[];
  await ctx.tables.versions.load(onSession(send), rows);
  const writes = planCandidates(ctx.tables.versions, request, rows);
  if (writes.length === 0) return null;
  if (writes.some((w) => touchesFamily(w.current, w.write))) return 'family';
  const write = preparedCall(runWritesStatement(ctx.tables, writes, { allLocked: true }));
  const notify = [...wakeNamespaces(writes)].map((ns) => notifyText(ctx.channel, ns));
  const durability = writes.every((w) => isPlainClaim(w.write)) ? [UNFLUSHED_COMMIT] : [];
  return { parts: [...durability, write, ...notify, 'COMMIT'], runs: writes.map((w) => w.write.run) };
}
