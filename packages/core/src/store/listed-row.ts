/** The columns `listRuns` reads of a run row for a listing, and the `ListedRun` they make. */
import { DEFAULT_GROUP } from '../machine/flow.js';
import type { RunRecord } from '../machine/run-types.js';
import type { ListedRun } from './read-requests.js';
import { parse } from './run-row.js';
import { RUN_COLUMNS } from './run-row-values.js';

/** The run columns a listing never shows: what it needs to claim, lease, deduplicate and trace a run, and payloads. */
const UNLISTED: ReadonlySet<string> = new Set([
  'namespace',
  'definition_hash',
  'query',
  'state',
  'claim_due_at',
  'idempotency_key',
  'input_hash',
  'policy',
  'events',
  'recovery',
  'trigger_event',
  'fence',
  'lease_owner',
  'lease_token',
  'lease_expires_at',
  'retries',
  'trace_parent',
]);

/** The columns of a `ListedRun` (`listedRunOf`), in table order: every run column but the `UNLISTED` ones. */
const LISTED_COLUMNS: readonly string[] = RUN_COLUMNS.filter((column) => !UNLISTED.has(column));

/** The columns `listRuns` selects: `LISTED_COLUMNS`, then `query` and `state` when the listing asks for payloads. */
export function listedColumns(payloads: boolean | undefined): readonly string[] {
  return payloads === true ? [...LISTED_COLUMNS, 'query', 'state'] : LISTED_COLUMNS;
}

/**
 * Rebuilds a `ListedRun` as `rowToRun` would, from a row's values in `listedColumns` order (better-sqlite3's
 * `raw(true)` answers them so, without building an object per row): with `query` and `state` when they were read.
 */
export function listedRunOf(values: readonly unknown[]): ListedRun {
  const v = values as ListedValues;
  const run: ListedRun = {
    runId: v[0],
    taskName: v[1],
    taskVersion: v[2],
    status: v[3],
    reason: v[4],
    page: v[5],
    pageFailures: v[6],
    businessFailures: v[7],
    scheduledRetries: v[8],
    recoveries: v[9],
    error: parse(v[10]),
    revision: v[11],
    trigger: parse(v[12]),
    dueAt: v[13],
    deadlineAt: v[14],
    modelCallLimit: v[15],
    modelCallsUsed: v[16],
    createdAt: v[17],
    updatedAt: v[18],
    priority: v[19],
    group: v[20] === DEFAULT_GROUP ? null : v[20],
    rateLimited: v[21],
    parent: v[22] === null ? null : { runId: v[22], page: Number(v[23]) },
    children: parse(v[24]),
  };
  if (v.length > LISTED_COLUMNS.length) {
    const [query, state] = v.slice(LISTED_COLUMNS.length) as [string, string | null];
    run.query = JSON.parse(query);
    run.state = parse(state);
  }
  return run;
}

/** A listed row's values, in `LISTED_COLUMNS` order. */
type ListedValues = readonly [
  runId: string,
  taskName: string,
  taskVersion: string,
  status: RunRecord['status'],
  reason: RunRecord['reason'],
  page: number,
  pageFailures: number,
  businessFailures: number,
  scheduledRetries: number,
  recoveries: number,
  error: string | null,
  revision: number,
  trigger: string | null,
  dueAt: number | null,
  deadlineAt: number | null,
  modelCallLimit: number | null,
  modelCallsUsed: number,
  createdAt: number,
  updatedAt: number,
  priority: number,
  group: string,
  rateLimited: number,
  parentRunId: string | null,
  parentPage: number | null,
  children: string | null,
  ...payloads: (string | null)[],
];
