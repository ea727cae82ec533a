import {
  type AsyncFamilyIo,
  type CountStep,
  childKeyTaken,
  countOnlySteps,
  followFamily,
  type RunRecord,
  type RunRow,
  rowToRun,
  touchesFamily,
} from '@docket/core/store';
import { type OutcomeTracker, sqlState } from '../errors.js';
import { docketRuns } from '../schema.js';
import { inlineText, type PreparedCall, preparedCall } from '../wire/prepared-calls.js';
import { columnList } from '../wire/recordsets.js';
import { type Send, sendParts } from '../wire/session.js';
import type { Statement } from '../wire/statement.js';
import { insertRunsStatement, type PendingWrite, runWritesStatement, type Tables } from './run-writes.js';

/** Runs one statement in the open transaction and answers its rows. */
export type Run = (statement: Statement) => Promise<unknown[]>;

/** `Run` on a session's connection, each statement prepared once per connection (see `preparedCall`). */
export function onSession(send: Send): Run {
  return async (statement) => (await sendParts(send, [preparedCall(statement)]))[0] ?? [];
}

/** The writes of a landed set that also write other runs (`touchesFamily`). */
export function familyWrites(writes: readonly PendingWrite[], landed: ReadonlySet<string>): PendingWrite[] {
  return writes.filter((w) => landed.has(w.current.runId) && touchesFamily(w.current, w.write));
}

/**
 * Walks what the family writes lead to (core's `followFamily`, all of them at once, so the children of one parent
 * are counted in one statement) in the open transaction: rows read `FOR UPDATE`, one write at a time, children
 * inserted (a taken key fails the transaction with `IDEMPOTENCY_CONFLICT`). Answers the
 * namespaces whose workers the walk left work for (woken children, a woken parent).
 */
export async function followFamilies(run: Run, tables: Tables, writes: readonly PendingWrite[]): Promise<Set<string>> {
  const wake = new Set<string>();
  await followFamily(writes, familyIo(run, tables, wake));
  return wake;
}

function familyIo(run: Run, tables: Tables, wake: Set<string>): AsyncFamilyIo {
  const columns = columnList(docketRuns);
  const rowsToRuns = (rows: unknown[]) => (rows as RunRow[]).map(rowToRun);
  // A parent's row as its count left it (locked by that UPDATE), for the walk's read of it that follows at once.
  const counted = new Map<string, RunRecord>();
  return {
    async count(namespace, parentRunId, by, now) {
      const step: CountStep = { kind: 'count', namespace, parentRunId, by, now };
      const parent = rowsToRuns(await run(countStatement(tables, step, columns)))[0];
      if (parent === undefined) return null;
      counted.set(parentRunId, parent);
      return { status: parent.status, children: parent.children as NonNullable<RunRecord['children']> };
    },
    async read(namespace, runId) {
      const parent = counted.get(runId);
      counted.delete(runId);
      if (parent !== undefined && parent.namespace === namespace) return parent;
      const rows = await run({
        text: `SELECT ${columns} FROM ${tables.runs} WHERE namespace = $1 AND run_id = $2 FOR UPDATE`,
        params: [namespace, runId],
      });
      return rowsToRuns(rows)[0] ?? null;
    },
    async unsettled(namespace, parentRunId) {
      const rows = await run({
        text: `SELECT ${columns} FROM ${tables.runs} WHERE namespace = $1 AND parent_run_id = $2
          AND status NOT IN ('success', 'failed', 'cancelled') ORDER BY run_id FOR UPDATE`,
        params: [namespace, parentRunId],
      });
      return rowsToRuns(rows);
    },
    async write(current, write) {
      counted.delete(current.runId);
      await run(runWritesStatement(tables, [{ current, write }], { allLocked: true }));
      if (write.run.status === 'pending' || write.events.length > 0) wake.add(write.run.namespace);
    },
    async insert(children) {
      const requests = children.map((child) => ({ ...child, maxRuns: null }));
      const inserted = new Set(
        (await run(insertRunsStatement(tables, requests))).map((r) => (r as RunRecordId).run_id),
      );
      const missing = children.find((child) => !inserted.has(child.run.runId));
      if (missing !== undefined) throw childKeyTaken(missing.run as RunRecord);
      wake.add((children[0] as { run: RunRecord }).run.namespace);
    },
  };
}

const SETTLED = "(children::jsonb ->> 'settled')::int";
const TOTAL = "(children::jsonb ->> 'total')::int";

/** The family walk's count step (core's `CountedParent`): the parent's counter raised, its row answered in `columns`. */
function countStatement(tables: Tables, { namespace, parentRunId, by, now }: CountStep, columns: string): Statement {
  return {
    text: `UPDATE ${tables.runs}
      SET children = jsonb_set(children::jsonb, '{settled}', to_jsonb(least(${SETTLED} + $4, ${TOTAL})))::text,
        updated_at = $3
      WHERE namespace = $1 AND run_id = $2 AND children IS NOT NULL AND ${SETTLED} < ${TOTAL}
      RETURNING ${columns}`,
    params: [namespace, parentRunId, now, by],
  };
}

/**
 * A count step that must leave its parent short of its total (core's `countOnlySteps`), as plain text: it raises the
 * counter only if `settled + by < total`, and otherwise fails with a division by zero (`COUNT_REACHES_TOTAL`), which
 * aborts every statement after it in the message. Plain text, not a prepared call: a failing message must not hold a
 * `PREPARE` that the connection would then not know it has (the prepared calls after it in the message are not run).
 */
export function countBelowTotalText(tables: Tables, { namespace, parentRunId, by, now }: CountStep): string {
  return inlineText({
    text: `WITH counted AS (UPDATE ${tables.runs}
        SET children = jsonb_set(children::jsonb, '{settled}', to_jsonb(${SETTLED} + $4))::text, updated_at = $3
        WHERE namespace = $1 AND run_id = $2 AND children IS NOT NULL AND ${SETTLED} + $4 < ${TOTAL}
        RETURNING 1)
      SELECT 1 / count(*)::int AS counted FROM counted`,
    params: [namespace, parentRunId, now, by],
  });
}

/** The SQLSTATE of `countBelowTotalText` when its count would reach its parent's total (division by zero). */
export const COUNT_REACHES_TOTAL = '22012';

/**
 * Ends an open transaction whose family writes (`familyWrites`) can only count their parents (core's
 * `countOnlySteps`: children that succeeded), none to its total: the counts and `end` (its last statement the COMMIT)
 * in one message after a savepoint, so a parent's row is locked only while the server runs it, not over a round trip
 * and a turn of this process. Answers `false` with nothing sent when the writes may do more, and `false` when a count
 * would have reached its total: the transaction is then back at the savepoint, for the caller to walk
 * (`followFamilies`) and commit.
 */
export async function commitCounting(
  send: Send,
  tables: Tables,
  family: readonly PendingWrite[],
  end: readonly (string | PreparedCall)[],
  outcome: OutcomeTracker,
): Promise<boolean> {
  const counts = countOnlySteps(family);
  if (counts === null) return false;
  outcome.committing();
  try {
    await sendParts(send, ['SAVEPOINT counts', ...counts.map((step) => countBelowTotalText(tables, step)), ...end]);
    return true;
  } catch (error) {
    if (sqlState(error) !== COUNT_REACHES_TOTAL) throw error;
    await sendParts(send, ['ROLLBACK TO SAVEPOINT counts']);
    outcome.rolledBack();
    return false;
  }
}

interface RunRecordId {
  run_id: string;
}
