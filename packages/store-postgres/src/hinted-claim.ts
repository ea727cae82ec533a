import { historyParams, type RunRecord, type RunRow, type RunWrite, runChanges, runColumn } from '@docket/core';
import { HINTED, type HintedRow } from './hints.js';
import { type PreparedCall, preparedCall } from './inline.js';
import { columnList, columnsOf, recordset } from './recordsets.js';
import type { PendingWrite, Tables } from './run-writes.js';
import { docketHistory, docketRuns } from './schema.js';
import { Params } from './statement.js';

/** What a hinted row stands in for the columns a hint does not carry, until the claim reads them back. */
export const UNKNOWN_TO_A_HINT = {
  query: 'null',
  state: null,
  error: null,
  idempotency_key: null,
  input_hash: '',
  trigger_event: null,
} satisfies Omit<RunRow, keyof HintedRow>;

/** Whether a claim's write is a plain claim: the run goes `running` and no callback event is written. */
export function isPlainClaim(write: RunWrite): boolean {
  return write.run.status === 'running' && write.events.length === 0;
}

/**
 * Whether a write planned on a hinted row can be written from the hint: a plain claim (a callback event's record
 * would hold the query) that keeps every application value of the row it was planned on.
 * Any other plan waits for the ordinary claim, which reads the whole row.
 */
export function claimableFromHint(current: RunRecord, write: RunWrite): boolean {
  const next = write.run;
  return (
    isPlainClaim(write) &&
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
const texts = new Map<string, string>();

/**
 * The one statement of a hinted claim: each row is written only where every hinted column still holds what its hint
 * said and no other transaction holds it (`SKIP LOCKED`), with its history; it answers the whole rows written, which
 * carry the application's columns the hint left out. The text depends only on the columns written, so it is built
 * once; a call sends the rows as one JSON value, their ids, and their history as another JSON value.
 */
export function hintedClaimCall(
  tables: Tables,
  writes: readonly PendingWrite[],
  hinted: ReadonlyMap<string, HintedRow>,
): PreparedCall {
  const deltas = writes.map(({ current, write }) => runChanges(current, write.run));
  const written = [...new Set(deltas.flatMap((delta) => Object.keys(delta)))].filter((c) => c !== 'run_id').sort();
  const key = `${tables.runs}\n${written.join(',')}`;
  let text = texts.get(key);
  if (text === undefined) {
    const params = new Params();
    const defs = ['"run_id" text', ...VERIFIED.map((c) => `"h_${c}" ${TYPES.get(c)}`)]
      .concat(written.map((c) => `"${c}" ${TYPES.get(c)}`))
      .join(', ');
    const rows = `json_to_recordset(${params.add(null, 'json')}) AS v(${defs})`;
    const ids = params.add(null, 'text[]');
    const history = recordset(params, docketHistory, [], 'x');
    const sets =
      written.length === 0 ? '"revision" = r."revision"' : written.map((c) => `"${c}" = v."${c}"`).join(', ');
    const guard = VERIFIED.map((c) => `r."${c}" IS NOT DISTINCT FROM v."h_${c}"`).join(' AND ');
    text = `WITH u AS (UPDATE ${tables.runs} AS r SET ${sets} FROM ${rows}
        WHERE r.run_id IN (SELECT run_id FROM ${tables.runs} WHERE run_id = ANY(${ids}) FOR UPDATE SKIP LOCKED)
          AND r.run_id = v.run_id AND ${guard}
        RETURNING r.*),
      h AS (INSERT INTO ${tables.history} (${columnList(docketHistory)})
        SELECT ${columnList(docketHistory, 'x.')} FROM ${history}
        WHERE x.run_id IN (SELECT run_id FROM u))
      SELECT * FROM u`;
    texts.set(key, text);
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
  return preparedCall({ text, params: [JSON.stringify(rows), ids, JSON.stringify(history)] });
}
