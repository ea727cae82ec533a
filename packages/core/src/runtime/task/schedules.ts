import * as v from 'valibot';
import { cronProblem, decideFiring, nextSlot, scheduleKeyPrefix } from '../../machine/schedule-slots.js';
import type { Misfire, ScheduleRecord } from '../../machine/schedule-types.js';
import type { CreateRunRequest } from '../../store/contract.js';
import { DocketError } from '../../util/errors.js';
import { canonicalJson, JSON_STRUCTURE_LIMITS, type Json, jsonSnapshot } from '../../util/json.js';
import { formatIssues, nameSchema, strictObject } from '../../util/validation.js';
import type { Engine } from '../queue/engine.js';
import type { ResolvedDefinition } from './definition.js';
import { prepareStart } from './start-input.js';

/** What `task.schedule` takes beside the id. */
export interface ScheduleOptions<Q> {
  /** Five fields (minutes) or six (seconds first), as the croner library reads them. */
  cron: string;
  /** An IANA time zone; default `UTC`. */
  timezone?: string;
  /** The query every slot's run is started with. */
  query: Q;
  /** The limits every slot's run is started with. */
  limits?: { modelCalls?: number };
  /** What to do with slots no consumer fired on time; default `latest`. */
  misfire?: Misfire;
  /**
   * Default `true` for a new schedule; left out, a schedule declared again keeps what it has (an operator's pause
   * stays). A disabled schedule fires nothing until it is enabled again.
   */
  enabled?: boolean;
}

/** What `task.schedule` answers. */
export interface ScheduleResult {
  scheduleId: string;
  created: boolean;
  revision: number;
}

const scheduleSchema = strictObject({
  cron: v.pipe(v.string(), v.minLength(1), v.maxBytes(256)),
  timezone: v.optional(v.pipe(v.string(), v.minLength(1), v.maxBytes(64))),
  query: v.unknown(),
  limits: v.optional(
    strictObject({ modelCalls: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1e9))) }),
  ),
  misfire: v.optional(v.picklist(['latest', 'skip', 'all'])),
  enabled: v.optional(v.boolean()),
});

/** Checks a schedule's id and options as `task.schedule` takes them; every refusal is `CONFIG_INVALID` or `JSON_INVALID`. */
function parseSchedule(engine: Engine, def: ResolvedDefinition, id: unknown, options: unknown, operation: string) {
  const idOk = v.safeParse(nameSchema, id);
  if (!idOk.success) {
    throw new DocketError('CONFIG_INVALID', `invalid schedule id: ${idOk.issues[0]?.message}`, {
      operation,
      details: { field: 'id' },
    });
  }
  const parsed = v.safeParse(scheduleSchema, options);
  if (!parsed.success) {
    const issues = formatIssues(parsed.issues);
    throw new DocketError('CONFIG_INVALID', `invalid schedule: ${issues[0]?.path}: ${issues[0]?.message}`, {
      operation,
      details: { issues, field: issues[0]?.path },
    });
  }
  const o = parsed.output;
  if (!('query' in (options as object))) {
    throw new DocketError('JSON_INVALID', 'query is required', { operation, details: { field: 'query' } });
  }
  const timezone = o.timezone ?? 'UTC';
  const problem = cronProblem(o.cron, timezone);
  if (problem !== null) {
    throw new DocketError('CONFIG_INVALID', `invalid schedule ${problem.field}: ${problem.message}`, {
      operation,
      details: { field: problem.field },
    });
  }
  const query = jsonSnapshot(
    o.query,
    'query',
    { bytes: engine.options.limits.queryBytes, ...JSON_STRUCTURE_LIMITS },
    operation,
  );
  if (def.schema.query && !v.safeParse(def.schema.query, query).success) {
    throw new DocketError('JSON_INVALID', 'query does not match schema.query', {
      operation,
      details: { field: 'query' },
    });
  }
  return { id: id as string, ...o, query, timezone, misfire: o.misfire ?? 'latest' };
}

/** The fields of a schedule that the application sets; a change of any of them is a new revision. */
function settingsOf(
  s: Pick<ScheduleRecord, 'cron' | 'timezone' | 'query' | 'limits' | 'misfire' | 'enabled' | 'taskVersion'>,
) {
  return canonicalJson({
    cron: s.cron,
    timezone: s.timezone,
    query: s.query,
    limits: s.limits,
    misfire: s.misfire,
    enabled: s.enabled,
    version: s.taskVersion,
  });
}

/**
 * `task.schedule`: creates or changes a persisted schedule of this task. A new schedule's first slot is the first one
 * after now; a changed one (same id) takes effect from its next slot. Another task's schedule of the same id is
 * `CONFIG_INVALID`.
 */
export async function upsertSchedule(
  engine: Engine,
  def: ResolvedDefinition,
  id: unknown,
  options: unknown,
): Promise<ScheduleResult> {
  const operation = 'task.schedule';
  const o = parseSchedule(engine, def, id, options, operation);
  return engine.store.transactSchedule(engine.namespace, o.id, (current) => {
    const now = engine.now();
    if (current !== null && current.taskName !== def.name) {
      throw new DocketError('CONFIG_INVALID', `schedule ${o.id} belongs to task ${current.taskName}`, {
        operation,
        details: { field: 'id' },
      });
    }
    const next: ScheduleRecord = {
      namespace: engine.namespace,
      id: o.id,
      taskName: def.name,
      taskVersion: def.version,
      cron: o.cron,
      timezone: o.timezone,
      query: o.query as Json,
      limits: o.limits ?? {},
      misfire: o.misfire,
      // Declared again without `enabled` (as at every start-up), a schedule keeps an operator's pause.
      enabled: o.enabled ?? current?.enabled ?? true,
      nextAt: nextSlot(o.cron, o.timezone, now),
      lastSlotAt: current?.lastSlotAt ?? null,
      revision: 1,
      createdAt: current?.createdAt ?? now,
      updatedAt: now,
    };
    if (current !== null && settingsOf(current) === settingsOf(next)) {
      return {
        schedule: null,
        runs: [],
        receipt: null,
        value: { scheduleId: o.id, created: false, revision: current.revision },
      };
    }
    next.revision = (current?.revision ?? 0) + 1;
    return {
      schedule: next,
      runs: [],
      receipt: null,
      value: { scheduleId: o.id, created: current === null, revision: next.revision },
    };
  });
}

/** `task.unschedule`: removes this task's schedule; runs it already made stay. */
export async function removeSchedule(
  engine: Engine,
  def: ResolvedDefinition,
  id: unknown,
): Promise<{ found: boolean }> {
  const operation = 'task.unschedule';
  if (!v.safeParse(nameSchema, id).success) {
    throw new DocketError('CONFIG_INVALID', 'invalid schedule id', { operation, details: { field: 'id' } });
  }
  return engine.store.transactSchedule(engine.namespace, id as string, (current) => {
    const found = current !== null && current.taskName === def.name;
    return { schedule: found ? 'delete' : null, runs: [], receipt: null, value: { found } };
  });
}

/**
 * Fires one due schedule, if it is still as `seen` (another consumer may have fired it meanwhile): the runs of its
 * slots (`decideFiring`), each with the idempotency key `schedule:<id>:<slot>` and the trigger `{ schedule, at }`,
 * written with the schedule's new `nextAt` in one transaction. Answers how many runs it made.
 */
export async function fireSchedule(engine: Engine, def: ResolvedDefinition, seen: ScheduleRecord): Promise<number> {
  const onTimeMs = Math.max(2 * engine.options.protocol.pollMs, 2_000);
  return engine.store.transactSchedule(engine.namespace, seen.id, (current) => {
    const now = engine.now();
    if (current === null || !current.enabled || current.nextAt !== seen.nextAt || current.revision !== seen.revision) {
      return { schedule: null, runs: [], receipt: null, value: 0 };
    }
    const firing = decideFiring(current, now, onTimeMs);
    const runs = firing.slots.map((slot) => slotRun(engine, def, current, slot));
    return {
      schedule: { ...current, nextAt: firing.nextAt, lastSlotAt: firing.lastSlotAt, updatedAt: now },
      runs,
      receipt: null,
      value: runs.length,
    };
  });
}

/** The run of one slot: started as `start` would start it, keyed by the slot, with the schedule as its trigger. */
function slotRun(
  engine: Engine,
  def: ResolvedDefinition,
  schedule: ScheduleRecord,
  slot: number,
): Pick<CreateRunRequest, 'run' | 'history'> {
  const at = new Date(slot).toISOString();
  const { run, history } = prepareStart(
    engine,
    def,
    { query: schedule.query, idempotencyKey: `${scheduleKeyPrefix(schedule.id)}${at}`, limits: schedule.limits },
    'schedule.fire',
  );
  run.trigger = { schedule: schedule.id, at };
  return { run, history };
}
