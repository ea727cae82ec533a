import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { replayEvent } from '../machine/event-machine.js';
import {
  type HistoryEntry,
  iso,
  RUN_STATUSES,
  type RunError,
  type RunInfo,
  type RunStatus,
  toRunInfo,
} from '../machine/run-types.js';
import { transitionWrite } from '../machine/run-write.js';
import { transition } from '../machine/state-machine.js';
import type { RunWrite } from '../store/contract.js';
import { DocketError } from '../util/errors.js';
import { assertRunId } from '../util/ids.js';
import { canonicalJson, type Json } from '../util/json.js';
import { formatIssues, nameSchema } from '../util/validation.js';
import type { Engine } from './engine.js';

/** What `runs.pause|resume|cancel` answer. */
export type OperatorResult =
  | { kind: 'not_found'; runId: string }
  | { kind: 'applied' | 'noop'; runId: string; revision: number; status: RunStatus; changed: boolean };

/** What `deadLetters.replay` answers. */
export type ReplayResult =
  | { kind: 'not_found'; eventId: string }
  | { kind: 'applied' | 'noop'; eventId: string; revision: number; status: string; changed: boolean };

/** One dead letter as `deadLetters.list` shows it. */
export interface DeadLetter {
  eventId: string;
  runId: string;
  kind: string;
  revision: number;
  deliveryAttempt: number;
  error: RunError | null;
  deadAt: string;
}

/** What `health()` answers. */
export interface Health {
  status: 'ready' | 'degraded' | 'unavailable';
  reasons: string[];
}

/** The operator API: list and steer runs, replay dead letters, collect, check health. */
export interface Operator {
  runs: {
    list(options?: { taskName?: string; status?: RunStatus; limit?: number; cursor?: string }): Promise<{
      items: RunInfo[];
      nextCursor: string | null;
    }>;
    /** Reads any run of the namespace, whatever its task (`null` when there is none). */
    get(runId: string): Promise<RunInfo | null>;
    /** Any run's history in `seq` order (`[]` when there is none). */
    history(runId: string): Promise<HistoryEntry[]>;
    pause(command: RunCommand): Promise<OperatorResult>;
    resume(command: RunCommand): Promise<OperatorResult>;
    cancel(command: RunCommand): Promise<OperatorResult>;
  };
  deadLetters: {
    list(options?: { limit?: number; cursor?: string }): Promise<{ items: DeadLetter[]; nextCursor: string | null }>;
    replay(command: {
      eventId: string;
      expectedRevision: number;
      reason: string;
      commandId: string;
    }): Promise<ReplayResult>;
  };
  maintenance: {
    collect(): Promise<{ runs: number; events: number; deadLetters: number }>;
  };
  health(): Promise<Health>;
}

/** An operator command on one run. */
export interface RunCommand {
  runId: string;
  expectedRevision: number;
  reason: string;
  commandId: string;
}

const commandFields = {
  expectedRevision: v.pipe(v.number(), v.integer(), v.minValue(1)),
  reason: v.pipe(v.string(), v.minBytes(1), v.maxBytes(1024)),
  commandId: v.pipe(v.string(), v.minBytes(1), v.maxBytes(128)),
};
const runCommandSchema = v.strictObject({ runId: v.string(), ...commandFields });
const replaySchema = v.strictObject({ eventId: v.pipe(v.string(), v.minLength(1), v.maxBytes(512)), ...commandFields });
const listSchema = v.strictObject({
  taskName: v.optional(nameSchema),
  status: v.optional(v.picklist(RUN_STATUSES)),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(200))),
  cursor: v.optional(v.string()),
});
const deadListSchema = v.strictObject({
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(200))),
  cursor: v.optional(v.string()),
});

function parse<T extends v.GenericSchema>(schema: T, input: unknown, operation: string): v.InferOutput<T> {
  const parsed = v.safeParse(schema, input ?? {});
  if (!parsed.success) {
    const issues = formatIssues(parsed.issues);
    throw new DocketError('CONFIG_INVALID', `invalid ${operation} input: ${issues[0]?.path}: ${issues[0]?.message}`, {
      operation,
      details: { issues },
    });
  }
  return parsed.output;
}

const hash = (value: unknown) => createHash('sha256').update(canonicalJson(value)).digest('hex');

/** An opaque cursor: the last id of a page and the hash of the filter it belongs to. */
function encodeCursor(after: string, filter: unknown): string {
  return Buffer.from(JSON.stringify({ v: 1, a: after, f: hash(filter).slice(0, 16) })).toString('base64url');
}

function decodeCursor(cursor: string | undefined, filter: unknown, operation: string): string | null {
  if (cursor === undefined) return null;
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      v?: number;
      a?: unknown;
      f?: unknown;
    };
    if (decoded.v === 1 && typeof decoded.a === 'string' && decoded.f === hash(filter).slice(0, 16)) return decoded.a;
  } catch {
    // falls through to the error below
  }
  throw new DocketError('CURSOR_INVALID', 'this cursor is malformed or belongs to another query', { operation });
}

/** Builds the operator API of one queue. */
export function createOperator(
  engine: Engine,
  assertUsable: (operation: string) => void,
  probes: () => string[],
): Operator {
  const { store, namespace } = engine;

  async function command(op: 'pause' | 'resume' | 'cancel', input: RunCommand): Promise<OperatorResult> {
    const operation = `operator.runs.${op}`;
    assertUsable(operation);
    const cmd = parse(runCommandSchema, input, operation);
    assertRunId(cmd.runId, operation);
    const requestHash = hash({ op, runId: cmd.runId, expectedRevision: cmd.expectedRevision, reason: cmd.reason });
    let applied: RunWrite | null = null;
    const outcome = await store.runCommand<OperatorResult>(
      namespace,
      { commandId: cmd.commandId, requestHash, runId: cmd.runId, now: engine.now() },
      ({ run }) => {
        if (run === null) return { run: null, event: null, result: { kind: 'not_found', runId: cmd.runId } };
        if (run.revision !== cmd.expectedRevision) {
          throw new DocketError(
            'REVISION_CONFLICT',
            `run ${cmd.runId} is at revision ${run.revision}, not ${cmd.expectedRevision}`,
            { operation, runId: cmd.runId, commandId: cmd.commandId, details: { revision: run.revision } },
          );
        }
        const detail: Json = { reason: cmd.reason, commandId: cmd.commandId };
        const decision = transition(
          run,
          op === 'cancel'
            ? { type: 'cancel', actor: 'operator', reason: 'OPERATOR_STOP', detail }
            : { type: op, actor: 'operator', detail },
          engine.now(),
        );
        if (!decision.ok) {
          const result: OperatorResult = {
            kind: 'noop',
            runId: run.runId,
            revision: run.revision,
            status: run.status,
            changed: false,
          };
          return { run: null, event: null, result };
        }
        applied = transitionWrite(decision);
        const result: OperatorResult = {
          kind: 'applied',
          runId: run.runId,
          revision: decision.run.revision,
          status: decision.run.status,
          changed: true,
        };
        return { run: applied, event: null, result };
      },
    );
    if (outcome.replayed && outcome.requestHash !== requestHash) {
      throw new DocketError('COMMAND_CONFLICT', `command ${cmd.commandId} was already used for another request`, {
        operation,
        runId: cmd.runId,
        commandId: cmd.commandId,
      });
    }
    if (!outcome.replayed && applied !== null) {
      engine.written(applied);
      if (op === 'cancel') engine.stopLocal(cmd.runId, 'cancelled');
    }
    return outcome.result;
  }

  return {
    runs: {
      async list(options = {}) {
        const operation = 'operator.runs.list';
        assertUsable(operation);
        const o = parse(listSchema, options, operation);
        const filter = { taskName: o.taskName ?? null, status: o.status ?? null };
        const after = decodeCursor(o.cursor, filter, operation);
        const limit = o.limit ?? 50;
        const runs = await store.listRuns({ namespace, ...filter, limit: limit + 1, after });
        const page = runs.slice(0, limit);
        const items = await Promise.all(
          page.map(async (run) => toRunInfo(run, await store.callbackCounts(namespace, run.runId))),
        );
        const last = page.at(-1);
        return { items, nextCursor: runs.length > limit && last ? encodeCursor(last.runId, filter) : null };
      },
      async get(runId) {
        assertUsable('operator.runs.get');
        assertRunId(runId, 'operator.runs.get');
        const run = await store.getRun(namespace, runId);
        return run ? toRunInfo(run, await store.callbackCounts(namespace, runId)) : null;
      },
      async history(runId) {
        assertUsable('operator.runs.history');
        assertRunId(runId, 'operator.runs.history');
        return store.getHistory(namespace, runId);
      },
      pause: (input) => command('pause', input),
      resume: (input) => command('resume', input),
      cancel: (input) => command('cancel', input),
    },
    deadLetters: {
      async list(options = {}) {
        const operation = 'operator.deadLetters.list';
        assertUsable(operation);
        const o = parse(deadListSchema, options, operation);
        const after = decodeCursor(o.cursor, { deadLetters: true }, operation);
        const limit = o.limit ?? 50;
        const events = await store.listEvents({ namespace, status: 'dead_letter', limit: limit + 1, after });
        const page = events.slice(0, limit);
        const items: DeadLetter[] = page.map((e) => ({
          eventId: e.eventId,
          runId: e.runId,
          kind: e.kind,
          revision: e.revision,
          deliveryAttempt: e.deliveryAttempt,
          error: e.lastError,
          deadAt: iso(e.deadAt ?? e.updatedAt),
        }));
        const last = page.at(-1);
        return {
          items,
          nextCursor: events.length > limit && last ? encodeCursor(last.eventId, { deadLetters: true }) : null,
        };
      },
      async replay(input) {
        const operation = 'operator.deadLetters.replay';
        assertUsable(operation);
        const cmd = parse(replaySchema, input, operation);
        const requestHash = hash({
          op: 'replay',
          eventId: cmd.eventId,
          expectedRevision: cmd.expectedRevision,
          reason: cmd.reason,
        });
        const outcome = await store.runCommand<ReplayResult>(
          namespace,
          { commandId: cmd.commandId, requestHash, eventId: cmd.eventId, now: engine.now() },
          ({ event }) => {
            if (event === null) return { run: null, event: null, result: { kind: 'not_found', eventId: cmd.eventId } };
            if (event.revision !== cmd.expectedRevision) {
              throw new DocketError(
                'REVISION_CONFLICT',
                `event ${cmd.eventId} is at revision ${event.revision}, not ${cmd.expectedRevision}`,
                { operation, eventId: cmd.eventId, commandId: cmd.commandId, details: { revision: event.revision } },
              );
            }
            const next = replayEvent(event, engine.now());
            if (next === null) {
              const result: ReplayResult = {
                kind: 'noop',
                eventId: event.eventId,
                revision: event.revision,
                status: event.status,
                changed: false,
              };
              return { run: null, event: null, result };
            }
            const result: ReplayResult = {
              kind: 'applied',
              eventId: next.eventId,
              revision: next.revision,
              status: next.status,
              changed: true,
            };
            return { run: null, event: next, result };
          },
        );
        if (outcome.replayed && outcome.requestHash !== requestHash) {
          throw new DocketError('COMMAND_CONFLICT', `command ${cmd.commandId} was already used for another request`, {
            operation,
            eventId: cmd.eventId,
            commandId: cmd.commandId,
          });
        }
        if (!outcome.replayed && outcome.result.kind === 'applied') engine.eventsWritten();
        return outcome.result;
      },
    },
    maintenance: {
      async collect() {
        assertUsable('operator.maintenance.collect');
        const now = engine.now();
        const totals = { runs: 0, events: 0, deadLetters: 0 };
        let after: string | null = null;
        do {
          const batch = await store.collect({
            namespace,
            runsBefore: now - engine.options.retention.runsMs,
            deadLettersBefore: now - engine.options.retention.deadLettersMs,
            limit: 500,
            after,
          });
          totals.runs += batch.runs;
          totals.events += batch.events;
          totals.deadLetters += batch.deadLetters;
          after = batch.next;
        } while (after !== null);
        return totals;
      },
    },
    async health() {
      const reasons = probes();
      try {
        assertUsable('operator.health');
      } catch (error) {
        return { status: 'unavailable', reasons: [...reasons, (error as Error).message] };
      }
      try {
        await store.getRun(namespace, '0'.repeat(32));
      } catch (error) {
        return { status: 'unavailable', reasons: [...reasons, `store: ${(error as Error).message}`] };
      }
      return reasons.length > 0 ? { status: 'degraded', reasons } : { status: 'ready', reasons: [] };
    },
  };
}
