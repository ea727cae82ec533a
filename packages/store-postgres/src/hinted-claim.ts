import { historyParams, type RunRecord, type RunRow, type RunWrite, runChanges, runColumn } from '@docket/core';
import { HINTED, type HintedRow } from './hints.js';
import { executeText, type PreparedCall, preparedCall } from './inline.js';
import { columnList, columnsOf } from './recordsets.js';
import type { PendingWrite, Tables } from './run-writes.js';
import { docketHistory, docketRuns } from './schema.js';

/** What a hinted row stands in for the columns a hint does not carry, until the claim reads them back. */
export const UNKNOWN_TO_A_HINT = {
  query: 'null',
  state: null,
  error: null,
  idempotency_key: null,
  input_hash: '',
  trigger_event: null,
} satisfies Omit<RunRow, keyof HintedRow>;

/**
 * Whether a write planned on a hinted row can be written from the hint: a plain claim (the run goes `running`, no
 * callback event, whose record would hold the query) that keeps every application value of the row it was planned on.
 * Any other plan waits for the ordinary claim, which reads the whole row.
 */
export function claimableFromHint(current: RunRecord, write: RunWrite): boolean {
  const next = write.run;
  return (
    next.status === 'running' &&
    write.events.length === 0 &&
    next.query === current.query &&
    next.state === current.state &&
    next.error === current.error &&
    next.idempotencyKey === current.idempotencyKey &&
    next.inputHash === current.inputHash &&
    next.triggerEvent === current.triggerEvent
  );
}

/** The hinted columns the claim compares with the row (the id is how it finds the row). */
const VERIFIED = HINTED.filter((column) => column !== 'run_id');
const TYPES = new Map(columnsOf(docketRuns).map((c) => [c.name, c.type]));
/** The statement text for each set of written columns (a claim of a pending run writes the same set every time). */
const texts = new Map<string, Omit<PreparedCall, 'execute'>>();

/**
 * The one statement of a hinted claim: each row is written only where every hinted column still holds what its hint
 * said and no other transaction holds it (`SKIP LOCKED`), with its history; it answers the whole rows written, which
 * carry the application's columns the hint left out. The text depends only on the columns written, so it is built
 * and named once; a call sends the rows as one JSON value and their ids.
 */
export function hintedClaimCall(
  tables: Tables,
  writes: readonly PendingWrite[],
  hinted: ReadonlyMap<string, HintedRow>,
): PreparedCall {
  const deltas = writes.map(({ current, write }) => runChanges(current, write.run));
  const written = [...new Set(deltas.flatMap((delta) => Object.keys(delta)))].filter((c) => c !== 'run_id').sort();
  const key = `${tables.runs}\n${written.join(',')}`;
  let statement = texts.get(key);
  if (statement === undefined) {
    const defs = ['"run_id" text', ...VERIFIED.map((c) => `"h_${c}" ${TYPES.get(c)}`)]
      .concat(written.map((c) => `"${c}" ${TYPES.get(c)}`))
      .join(', ');
    const sets =
      written.length === 0 ? '"revision" = r."revision"' : written.map((c) => `"${c}" = v."${c}"`).join(', ');
    const guard = VERIFIED.map((c) => `r."${c}" IS NOT DISTINCT FROM v."h_${c}"`).join(' AND ');
    const history = columnsOf(docketHistory)
      .map((c) => `"${c.name}" ${c.type}`)
      .join(', ');
    const text = `WITH u AS (UPDATE ${tables.runs} AS r SET ${sets} FROM json_to_recordset($1::json) AS v(${defs})
        WHERE r.run_id IN (SELECT run_id FROM ${tables.runs} WHERE run_id = ANY($2::text[]) FOR UPDATE SKIP LOCKED)
          AND r.run_id = v.run_id AND ${guard}
        RETURNING r.*),
      h AS (INSERT INTO ${tables.history} (${columnList(docketHistory)})
        SELECT ${columnList(docketHistory, 'x.')} FROM json_to_recordset($3::json) AS x(${history})
        WHERE x.run_id IN (SELECT run_id FROM u))
      SELECT * FROM u`;
    const { name, prepare } = preparedCall({ text, params: [] });
    statement = { name, prepare };
    texts.set(key, statement);
  }
  const rows = writes.map(({ current, write }, index) => {
    const row: Record<string, unknown> = { run_id: current.runId };
    const hint = hinted.get(current.runId) as HintedRow;
    for (const column of VERIFIED) row[`h_${column}`] = hint[column];
    const delta = deltas[index] as Record<string, unknown>;
    for (const column of written)
      row[column] = column in delta ? delta[column] : runColumn(write.run, column as keyof RunRow);
    return row;
  });
  const history = writes.flatMap(({ write }) => write.history.map((entry) => historyParams(write.run.runId, entry)));
  const ids = writes.map((w) => w.current.runId);
  return { ...statement, execute: executeText(statement.name, [JSON.stringify(rows), ids, JSON.stringify(history)]) };
}
