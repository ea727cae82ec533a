import { DocketError } from '@docket/core';
import {
  checkWrite,
  isThenable,
  type KnownRuns,
  type PlanResult,
  type RunRecord,
  type RunRow,
  type TransactPlan,
  touchesFamily,
} from '@docket/core/store';
import { sql } from 'drizzle-orm';
import type { PostgresTransaction } from '../../connection.js';
import { classify, OutcomeTracker, sqlState, statementRefused } from '../../errors.js';
import { Batcher, type Queued } from '../../wire/micro-batcher.js';
import { notifyText, type PreparedCall, preparedCall } from '../../wire/prepared-calls.js';
import { BEGIN, type Session, sendParts, writeInOneMessage } from '../../wire/session.js';
import { familyWrites, followFamilies, onSession } from '../../writes/family.js';
import {
  applyLockedWrites,
  applyRunWrites,
  type PendingWrite,
  queryOn,
  rowsOf,
  runWritesStatement,
  type Tables,
  wakeNamespaces,
} from '../../writes/run-writes.js';
import type { Transaction } from '../../writes/transaction.js';

interface TransactItem extends Queued<unknown> {
  namespace: string;
  runId: string;
  plan: TransactPlan<unknown, PostgresTransaction>;
}

/** SQLSTATEs after which a whole transaction can simply run again: nothing of it was written. */
const RETRYABLE = new Set(['40001', '40P01']);
const ATTEMPTS = 3;

/**
 * Batched commit for pure `transact` plans: one transaction decides every plan of the batch (see `runPlans`) and
 * writes all their writes with one statement.
 * A plan that throws rejects only its own call; a failed transaction rejects them all (and is retried first when
 * the server aborted it for a serialization failure or deadlock, since nothing of it was written).
 */
export function transactBatcher(
  tables: Tables,
  transaction: Transaction,
  known: KnownRuns,
  session: () => Session | undefined,
): <T>(namespace: string, runId: string, plan: TransactPlan<T, PostgresTransaction>) => Promise<T> {
  const batcher = new Batcher<TransactItem>(
    async (whole) => {
      const open = session();
      const batch = open === undefined ? whole : await writeInOneTrip(whole, open, tables, known);
      if (batch.length === 0) return;
      for (let attempt = 1; ; attempt++) {
        const outcome = new OutcomeTracker();
        try {
          // What the one-round-trip path left over, it already tried on the remembered rows: read them fresh.
          const shortcut = open === undefined ? known : null;
          const settled = await transaction(outcome, (tx) => runPlans(tx, tables, batch, shortcut));
          const alone: TransactItem[] = [];
          for (const [index, item] of batch.entries()) {
            const result = settled[index] as Settled;
            if (!result.ok && result.error === ALONE) {
              alone.push(item);
              continue;
            }
            if (result.ok && result.run !== null) known.committed(result.run);
            else known.forget(item.runId);
            if (result.ok) item.resolve(result.value);
            else item.reject(result.error);
          }
          await Promise.all(alone.map((item) => transactAlone(item, tables, transaction, known)));
          return;
        } catch (error) {
          const state = sqlState(error);
          if (attempt < ATTEMPTS && state !== undefined && RETRYABLE.has(state)) continue;
          // One write the server refused fails the statement of all: each plan runs again in a transaction of its own.
          if (batch.length > 1 && statementRefused(error)) {
            await Promise.all(batch.map((item) => transactAlone(item, tables, transaction, known)));
            return;
          }
          for (const item of batch) {
            known.forget(item.runId);
            item.reject(classify(error, outcome, 'store.transact', { runId: item.runId }));
          }
          return;
        }
      }
    },
    { maxBatch: 500, maxRunning: 4 },
  );
  return <T>(namespace: string, runId: string, plan: TransactPlan<T, PostgresTransaction>) =>
    new Promise<T>((resolve, reject) =>
      batcher.push({
        key: runId,
        namespace,
        runId,
        plan: plan as TransactPlan<unknown, PostgresTransaction>,
        resolve: resolve as (value: unknown) => void,
        reject,
      }),
    );
}

/**
 * The fast path for runs this instance holds: each plan is decided on the remembered row and all their guarded
 * writes, the notifications and the COMMIT go to the server as one text, one round trip. Answers the calls it did
 * not settle (no remembered row, a plan that wrote nothing or threw, a guard that failed, a statement the server
 * refused), for the ordinary path. A lost connection leaves the outcome unknown: those calls get OUTCOME_UNKNOWN.
 */
async function writeInOneTrip(
  batch: TransactItem[],
  session: Session,
  tables: Tables,
  known: KnownRuns,
): Promise<TransactItem[]> {
  const rest: TransactItem[] = [];
  const guarded: (PendingWrite & { item: TransactItem; value: unknown })[] = [];
  for (const item of batch) {
    const remembered = known.get(item.namespace, item.runId);
    if (remembered === undefined) {
      rest.push(item);
      continue;
    }
    try {
      // A pure plan ignores its transaction; this path has none to give. A plain answer is not awaited: one await
      // per run of a batch was one more promise and one more turn of the microtask queue each.
      const planned = item.plan(undefined as never, remembered);
      const { write, value } = (isThenable(planned) ? await planned : planned) as PlanResult<unknown>;
      // A write that creates children goes to the ordinary path: a child key already taken must fail it alone.
      if (write === null || write.children !== undefined) rest.push(item);
      else guarded.push({ item, current: remembered, write, value });
    } catch {
      rest.push(item);
    }
  }
  if (guarded.length === 0) return rest;
  const write = preparedCall(runWritesStatement(tables, guarded));
  const outcome = new OutcomeTracker();
  let landed: Set<string>;
  try {
    landed = guarded.some((g) => touchesFamily(g.current, g.write))
      ? await writeWithFamilies(session, tables, guarded, write, outcome)
      : await writeGuardedInOneMessage(session, tables, guarded, write, outcome);
  } catch (error) {
    for (const { item } of guarded) known.forget(item.runId);
    const classified = classify(error, outcome, 'store.transact', {});
    if (!(classified instanceof DocketError && classified.code === 'OUTCOME_UNKNOWN')) {
      return [...rest, ...guarded.map((g) => g.item)];
    }
    for (const { item } of guarded) {
      item.reject(classify(error, outcome, 'store.transact', { runId: item.runId }));
    }
    return rest;
  }
  for (const { item, write, value } of guarded) {
    if (landed.has(item.runId)) {
      known.committed(write.run);
      item.resolve(value);
    } else {
      known.forget(item.runId);
      rest.push(item);
    }
  }
  return rest;
}

/** The guarded writes, their notifications and the COMMIT in one message: answers the ids that landed. */
function writeGuardedInOneMessage(
  session: Session,
  tables: Tables,
  guarded: readonly PendingWrite[],
  write: PreparedCall,
  outcome: OutcomeTracker,
): Promise<Set<string>> {
  const notify = [...wakeNamespaces(guarded)].map((ns) => notifyText(tables.channel, ns));
  outcome.committing();
  return writeInOneMessage(session, write, notify);
}

/**
 * The guarded writes when some of them settle children (or end a parent): the write first, then what the writes that
 * landed lead to (`followFamilies`: their parents counted, one statement per parent, and moved when the count calls
 * for it), on the same connection with prepared statements, then the notifications and the COMMIT. Answers the ids
 * that landed. Until the COMMIT is sent nothing is committed: a failure before it leaves every call to the ordinary
 * path.
 */
async function writeWithFamilies(
  session: Session,
  tables: Tables,
  guarded: readonly PendingWrite[],
  write: PreparedCall,
  outcome: OutcomeTracker,
): Promise<Set<string>> {
  return session(async (send) => {
    const results = await sendParts(send, [...BEGIN, write]);
    const landed = new Set((results[BEGIN.length] as { run_id: string }[]).map((row) => row.run_id));
    const wake = await followFamilies(onSession(send), tables, familyWrites(guarded, landed));
    for (const namespace of wakeNamespaces(guarded, landed)) wake.add(namespace);
    outcome.committing();
    await sendParts(send, [...[...wake].map((ns) => notifyText(tables.channel, ns)), 'COMMIT']);
    return landed;
  });
}

/** One pure plan in a transaction of its own, after its batch's transaction was refused: its own outcome. */
async function transactAlone(item: TransactItem, tables: Tables, transaction: Transaction, known: KnownRuns) {
  const outcome = new OutcomeTracker();
  known.forget(item.runId);
  try {
    const [result] = await transaction(outcome, (tx) => runPlans(tx, tables, [item], null));
    const settled = result as Settled;
    if (settled.ok && settled.run !== null) known.committed(settled.run);
    if (settled.ok) item.resolve(settled.value);
    else item.reject(settled.error);
  } catch (error) {
    item.reject(classify(error, outcome, 'store.transact', { runId: item.runId }));
  }
}

type Settled = { ok: true; value: unknown; run: RunRecord | null } | { ok: false; error: unknown };

/**
 * What a plan of a batch of several gets when its write creates children: it is decided again in a transaction of its
 * own after the batch, so that a child key already taken fails its commit alone. Other family writes (a child's
 * settle counted on its parent, a cancel's cascade) stay in the batch: `applyLockedWrites` follows them there, and
 * many children of one parent settle under one lock of its row and one commit.
 */
const ALONE = Symbol('alone');

/**
 * Decides and writes one batch of pure plans. Runs this instance holds (see `KnownRuns`; `null` skips this) are
 * decided on their remembered row and written with a guard; the others, and any whose guard failed or whose plan
 * wrote nothing (its answer may rest on a stale row), are read under `FOR UPDATE` in id order and decided again.
 */
async function runPlans(
  tx: PostgresTransaction,
  tables: Tables,
  batch: readonly TransactItem[],
  known: KnownRuns | null,
): Promise<Settled[]> {
  const settled: Settled[] = new Array(batch.length);
  const fresh: number[] = [];
  const guarded: (PendingWrite & { index: number; value: unknown })[] = [];
  for (const [index, item] of batch.entries()) {
    const remembered = known?.get(item.namespace, item.runId);
    if (remembered === undefined) {
      fresh.push(index);
      continue;
    }
    try {
      const { write, value } = (await item.plan(tx, remembered)) as PlanResult<unknown>;
      if (write === null || touchesFamily(remembered, write)) fresh.push(index);
      else guarded.push({ index, current: remembered, write, value });
    } catch {
      fresh.push(index);
    }
  }
  const landed = await applyRunWrites(tx, tables, guarded);
  for (const { index, current, write, value } of guarded) {
    if (landed.has(current.runId)) settled[index] = { ok: true, value, run: write.run };
    else fresh.push(index);
  }
  if (fresh.length === 0) return settled;

  fresh.sort((a, b) => a - b);
  const ids = sql.param(fresh.map((index) => (batch[index] as TransactItem).runId));
  const found = await rowsOf<RunRow>(
    tx,
    sql`SELECT * FROM ${sql.raw(tables.runs)} WHERE run_id = ANY(${ids}::text[]) ORDER BY run_id FOR UPDATE`,
  );
  await tables.versions.load(queryOn(tx), found);
  const rows = new Map(found.map((row) => [row.run_id, row]));
  const writes: PendingWrite[] = [];
  for (const index of fresh) {
    const item = batch[index] as TransactItem;
    const row = rows.get(item.runId);
    const current = row !== undefined && row.namespace === item.namespace ? tables.versions.runOf(row) : null;
    try {
      const { write, value } = (await item.plan(tx, current)) as PlanResult<unknown>;
      if (write !== null) {
        if (current === null) throw new Error('internal: write for a missing run');
        checkWrite(current, write);
        if (batch.length > 1 && write.children !== undefined) {
          settled[index] = { ok: false, error: ALONE };
          continue;
        }
        writes.push({ current, write });
      }
      settled[index] = { ok: true, value, run: write?.run ?? null };
    } catch (error) {
      settled[index] = { ok: false, error };
    }
  }
  await applyLockedWrites(tx, tables, writes);
  return settled;
}
