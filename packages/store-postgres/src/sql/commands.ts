import type { Json } from '@docket/core';
import {
  type CommandPlan,
  type CommandRequest,
  decideCommand,
  type EventRow,
  type RunRow,
  replayedReceipt,
  rowToEvent,
} from '@docket/core/store';
import { type SQL, sql } from 'drizzle-orm';
import type { PgContext } from '../context.js';
import { taskRecords, writeTask } from '../flow/task-rows.js';
import { writeEvent } from '../writes/callback-event-writes.js';
import { queryOn, rowsOf } from '../writes/run-writes.js';

/**
 * `Store.runCommand`: under an advisory lock on the command id, a stored receipt is answered as it is; otherwise the
 * run or event is locked, core's plan decides, its writes and the receipt commit together.
 */
export function runCommand<T extends Json>(
  ctx: PgContext,
  namespace: string,
  command: CommandRequest,
  plan: CommandPlan<T>,
): Promise<{ result: T; replayed: boolean; requestHash: string }> {
  if (command.runId !== undefined) ctx.known.forget(command.runId);
  return ctx.inTransaction('store.runCommand', async (tx) => {
    await tx.execute(
      sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${namespace}:command:${command.commandId}`}, 0))`,
    );
    const [receipt] = await rowsOf<{ request_hash: string; result: string }>(
      tx,
      sql`SELECT request_hash, result FROM ${ctx.q.commands} WHERE namespace = ${namespace} AND command_id = ${command.commandId}`,
    );
    if (receipt) return replayedReceipt<T>(receipt.result, receipt.request_hash);
    const lock = <R>(table: SQL, column: string, id: string | undefined) =>
      id === undefined
        ? Promise.resolve(undefined)
        : rowsOf<R>(
            tx,
            sql`SELECT * FROM ${table} WHERE namespace = ${namespace} AND ${sql.raw(column)} = ${id} FOR UPDATE`,
          ).then((rows) => rows[0]);
    const runRow = await lock<RunRow>(ctx.q.runs, 'run_id', command.runId);
    const eventRow = await lock<EventRow>(ctx.q.events, 'event_id', command.eventId);
    const run = runRow ? ((await ctx.tables.versions.runsOf(queryOn(tx), [runRow]))[0] ?? null) : null;
    const event = eventRow ? rowToEvent(eventRow) : null;
    const task =
      command.taskName === undefined
        ? null
        : ((await taskRecords(tx, ctx.tables, namespace, [command.taskName], true)).get(command.taskName) ?? null);
    const decided = decideCommand(plan, run, event, task);
    if (decided.run !== null) await ctx.applyWrite(tx, decided.run.current, decided.run.write);
    if (decided.task !== null) {
      await writeTask(tx, ctx.tables, decided.task);
      ctx.rememberFlowState(decided.task);
    }
    if (decided.event !== null) await writeEvent(ctx, tx, decided.event.current, decided.event.write);
    await tx.execute(
      sql`INSERT INTO ${ctx.q.commands} (namespace, command_id, request_hash, result, created_at)
          VALUES (${namespace}, ${command.commandId}, ${command.requestHash}, ${JSON.stringify(decided.result)}, ${command.now})`,
    );
    return { result: decided.result, replayed: false, requestHash: command.requestHash };
  });
}
