import type { CreateRunRequest, CreateRunResult, RunRecord, RunRow } from '@docket/core/store';
import { sql } from 'drizzle-orm';
import { classify, OutcomeTracker, statementRefused } from '../../errors.js';
import { Batcher, type Queued } from '../../wire/micro-batcher.js';
import { notifyText, preparedCall } from '../../wire/prepared-calls.js';
import { type Session, writeInOneMessage } from '../../wire/session.js';
import {
  type Executor,
  insertRuns,
  insertRunsStatement,
  queryOn,
  rowsOf,
  type Tables,
} from '../../writes/run-writes.js';
import type { Transaction } from '../../writes/transaction.js';

interface StartItem extends Queued<CreateRunResult> {
  request: CreateRunRequest;
}

/**
 * Batched commit for `createRun`: concurrent starts (without a `maxRuns` cap) are inserted by one statement in one
 * transaction. A start whose idempotency key is taken, by a committed run or by an earlier start of the same batch,
 * answers with that run.
 */
export function startBatcher(
  tables: Tables,
  transaction: Transaction,
  session: () => Session | undefined,
  read: () => Executor,
): (request: CreateRunRequest) => Promise<CreateRunResult> {
  const batcher = new Batcher<StartItem>(
    async (batch) => {
      const requests = batch.map((item) => item.request);
      const outcome = new OutcomeTracker();
      const fail = (items: StartItem[], error: unknown, at: OutcomeTracker) => {
        for (const { request, reject } of items) {
          const { runId, idempotencyKey } = request.run;
          reject(classify(error, at, 'task.start', { runId, ...(idempotencyKey === null ? {} : { idempotencyKey }) }));
        }
      };
      let inserted: Set<string>;
      try {
        const open = session();
        inserted =
          open === undefined
            ? await transaction(outcome, (tx) => insertRuns(tx, tables, requests))
            : await insertInOneTrip(open, tables, requests, outcome);
      } catch (error) {
        // One start the server refused fails the statement of all: each is tried again in a transaction of its own.
        if (batch.length > 1 && statementRefused(error)) {
          await Promise.all(batch.map((item) => startAlone(item, tables, transaction, read)));
          return;
        }
        fail(batch, error, outcome);
        return;
      }
      // A start whose key was taken answers with the run that holds it, committed by now (the insert waited for it).
      const taken = batch.filter((item) => !inserted.has(item.request.run.runId));
      let existing: Map<string, RunRecord>;
      try {
        existing = await runsByKey(read(), tables, taken);
      } catch (error) {
        fail(taken, error, new OutcomeTracker());
        existing = new Map();
      }
      for (const { request, resolve, reject } of batch) {
        const { run } = request;
        if (inserted.has(run.runId)) {
          resolve({ kind: 'created', run });
          continue;
        }
        const found = existing.get(keyOf(run.namespace, run.taskName, run.idempotencyKey));
        if (found) resolve({ kind: 'existing', run: found });
        else reject(new Error('internal: an idempotency key conflicted with no run'));
      }
    },
    { maxBatch: 500, maxRunning: 2 },
  );
  return (request) =>
    new Promise((resolve, reject) => batcher.push({ key: request.run.runId, request, resolve, reject }));
}

/** One start in a transaction of its own, after its batch's statement was refused: it gets its own outcome. */
async function startAlone(item: StartItem, tables: Tables, transaction: Transaction, read: () => Executor) {
  const { request } = item;
  const { runId, idempotencyKey } = request.run;
  const outcome = new OutcomeTracker();
  try {
    const inserted = await transaction(outcome, (tx) => insertRuns(tx, tables, [request]));
    if (inserted.has(runId)) {
      item.resolve({ kind: 'created', run: request.run });
      return;
    }
    const found = (await runsByKey(read(), tables, [item])).values().next().value;
    if (found === undefined) throw new Error('internal: an idempotency key conflicted with no run');
    item.resolve({ kind: 'existing', run: found });
  } catch (error) {
    item.reject(
      classify(error, outcome, 'task.start', { runId, ...(idempotencyKey === null ? {} : { idempotencyKey }) }),
    );
  }
}

/**
 * Inserts a batch of starts as `BEGIN; insert; notify; COMMIT` in one round trip. Each namespace with new pending runs
 * is notified once, with its name only: a notification wakes workers, which claim with the plain claim's statement.
 */
export async function insertInOneTrip(
  session: Session,
  tables: Tables,
  requests: readonly CreateRunRequest[],
  outcome: OutcomeTracker,
): Promise<Set<string>> {
  const insert = preparedCall(insertRunsStatement(tables, requests));
  const pending = new Set(requests.filter(({ run }) => run.status === 'pending').map(({ run }) => run.namespace));
  const notify = [...pending].map((namespace) => notifyText(tables.channel, namespace));
  outcome.committing();
  return writeInOneMessage(session, insert, notify);
}

/** The runs that hold the idempotency keys of `items`, by namespace, task and key. */
async function runsByKey(db: Executor, tables: Tables, items: readonly StartItem[]): Promise<Map<string, RunRecord>> {
  const found = new Map<string, RunRecord>();
  if (items.length === 0) return found;
  const runs = items.map((item) => item.request.run);
  if (runs.some((run) => run.idempotencyKey === null)) throw new Error('internal: a run id was reused');
  const keys = runs.map((r) => ({ namespace: r.namespace, task_name: r.taskName, key: r.idempotencyKey }));
  const rows = await rowsOf<RunRow>(
    db,
    sql`SELECT r.* FROM ${sql.raw(tables.runs)} r JOIN json_to_recordset(${JSON.stringify(keys)}::json)
        AS k(namespace text, task_name text, key text)
        ON r.namespace = k.namespace AND r.task_name = k.task_name AND r.idempotency_key = k.key`,
  );
  for (const run of await tables.versions.runsOf(queryOn(db), rows))
    found.set(keyOf(run.namespace, run.taskName, run.idempotencyKey), run);
  return found;
}

const keyOf = (namespace: string, taskName: string, key: string | null) => `${namespace}\u0000${taskName}\u0000${key}`;
