/** The callback event row both SQL stores use, and its codec. */
import type { CallbackEventRecord } from '../machine/run-types.js';
import { json, leaseOf, parse } from './run-row.js';

/** A `docket_events` row. */
export interface EventRow {
  event_id: string;
  namespace: string;
  run_id: string;
  task_name: string;
  task_version: string;
  kind: string;
  batch_id: string;
  sequence: number;
  status: string;
  delivery_attempt: number;
  replay_generation: number;
  revision: number;
  due_at: number;
  timestamp: string;
  query: string;
  state: string | null;
  error: string | null;
  last_error: string | null;
  lease_owner: string | null;
  lease_token: number | null;
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
  dead_at: number | null;
}

/** Rebuilds a `CallbackEventRecord` from its row. */
export function rowToEvent(row: EventRow): CallbackEventRecord {
  return {
    eventId: row.event_id,
    namespace: row.namespace,
    runId: row.run_id,
    taskName: row.task_name,
    taskVersion: row.task_version,
    kind: row.kind as CallbackEventRecord['kind'],
    batchId: row.batch_id,
    sequence: row.sequence,
    status: row.status as CallbackEventRecord['status'],
    deliveryAttempt: row.delivery_attempt,
    replayGeneration: row.replay_generation,
    revision: row.revision,
    dueAt: row.due_at,
    timestamp: row.timestamp,
    query: JSON.parse(row.query),
    state: parse(row.state),
    error: parse(row.error),
    lastError: parse(row.last_error),
    lease: leaseOf(row),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deliveredAt: row.delivered_at,
    deadAt: row.dead_at,
  };
}

/** Named parameters for one callback event row. */
export function eventParams(event: CallbackEventRecord): EventRow {
  return {
    event_id: event.eventId,
    namespace: event.namespace,
    run_id: event.runId,
    task_name: event.taskName,
    task_version: event.taskVersion,
    kind: event.kind,
    batch_id: event.batchId,
    sequence: event.sequence,
    status: event.status,
    delivery_attempt: event.deliveryAttempt,
    replay_generation: event.replayGeneration,
    revision: event.revision,
    due_at: event.dueAt,
    timestamp: event.timestamp,
    query: JSON.stringify(event.query),
    state: json(event.state),
    error: json(event.error),
    last_error: json(event.lastError),
    lease_owner: event.lease?.owner ?? null,
    lease_token: event.lease?.token ?? null,
    lease_expires_at: event.lease?.expiresAt ?? null,
    created_at: event.createdAt,
    updated_at: event.updatedAt,
    delivered_at: event.deliveredAt,
    dead_at: event.deadAt,
  };
}

/** The columns of a callback event row, in table order. */
export const EVENT_COLUMNS = [
  'event_id',
  'namespace',
  'run_id',
  'task_name',
  'task_version',
  'kind',
  'batch_id',
  'sequence',
  'status',
  'delivery_attempt',
  'replay_generation',
  'revision',
  'due_at',
  'timestamp',
  'query',
  'state',
  'error',
  'last_error',
  'lease_owner',
  'lease_token',
  'lease_expires_at',
  'created_at',
  'updated_at',
  'delivered_at',
  'dead_at',
] as const;
