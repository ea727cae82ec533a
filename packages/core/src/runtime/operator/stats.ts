import * as v from 'valibot';
import { RUN_STATUSES, type RunStatus } from '../../machine/run-types.js';
import { nameSchema, strictObject } from '../../util/validation.js';
import { type OperatorScope, parse } from './input.js';

/** Run counts with every status as a key, 0 where there is none. */
export type StatusCounts = Record<RunStatus, number>;

/** What `operator.stats()` answers: counts by status and by task, dead letters, the age of the oldest due run. */
export interface Stats {
  /** When the counts were read (ISO-8601 UTC). */
  at: string;
  byStatus: StatusCounts;
  /** One entry per task version with runs, by name then version. */
  byTask: { name: string; version: string; byStatus: StatusCounts }[];
  deadLetters: number;
  /** How long the earliest due run has waited to be claimed (ms), or `null` when nothing is due. */
  oldestDueAgeMs: number | null;
}

const statsSchema = strictObject({ taskName: v.optional(nameSchema) });

/** A `StatusCounts` of zeros. */
function zeros(): StatusCounts {
  return Object.fromEntries(RUN_STATUSES.map((status) => [status, 0])) as StatusCounts;
}

/** `operator.stats({ taskName? })`: the store's counters and indexes, shaped with every status as a key. */
export async function operatorStats(scope: OperatorScope, options: unknown): Promise<Stats> {
  const { taskName } = parse(statsSchema, options, 'operator.stats');
  scope.assertUsable('operator.stats');
  const { engine } = scope;
  const now = engine.now();
  const answer = await engine.store.runStats({ namespace: engine.namespace, taskName: taskName ?? null, now });
  const byStatus = zeros();
  const tasks = new Map<string, Stats['byTask'][number]>();
  for (const row of answer.counts) {
    if (row.count <= 0) continue;
    byStatus[row.status] += row.count;
    const id = `${row.taskName}\u0000${row.taskVersion}`;
    let task = tasks.get(id);
    if (task === undefined) {
      task = { name: row.taskName, version: row.taskVersion, byStatus: zeros() };
      tasks.set(id, task);
    }
    task.byStatus[row.status] += row.count;
  }
  const byTask = [...tasks.values()].sort((a, b) =>
    a.name === b.name ? compare(a.version, b.version) : compare(a.name, b.name),
  );
  return {
    at: new Date(now).toISOString(),
    byStatus,
    byTask,
    deadLetters: answer.deadLetters,
    oldestDueAgeMs: answer.oldestDueAt === null ? null : Math.max(0, now - answer.oldestDueAt),
  };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
