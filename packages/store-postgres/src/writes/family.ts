import {
  type AsyncFamilyIo,
  childKeyTaken,
  followFamily,
  type RunRecord,
  type RunRow,
  touchesFamily,
} from '@docket/core/store';
import { docketRuns } from '../schema.js';
import { preparedCall } from '../wire/prepared-calls.js';
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
  const rowsToRuns = (rows: unknown[]) => tables.versions.runsOf(run, rows as RunRow[]);
  // A parent's row as its count left it (locked by that UPDATE), for the walk's read of it that follows at once.
  const counted = new Map<string, RunRecord>();
  return {
    async count(namespace, parentRunId, by, now) {
      const settled = "(children::jsonb ->> 'settled')::int";
      const total = "(children::jsonb ->> 'total')::int";
      const rows = await run({
        text: `UPDATE ${tables.runs}
          SET children = jsonb_set(children::jsonb, '{settled}', to_jsonb(least(${settled} + $4, ${total})))::text,
            updated_at = $3
          WHERE namespace = $1 AND run_id = $2 AND children IS NOT NULL AND ${settled} < ${total}
          RETURNING ${columns}`,
        params: [namespace, parentRunId, now, by],
      });
      const parent = (await rowsToRuns(rows))[0];
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
      return (await rowsToRuns(rows))[0] ?? null;
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

interface RunRecordId {
  run_id: string;
}
