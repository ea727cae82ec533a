import type { RunRecord } from '../machine/run-types.js';
import type { CreateRunRequest } from './contract.js';

/** What a bulk start comes to, decided inside the store's transaction from the runs its keys already name. */
export type StartsPlan =
  | {
      kind: 'ok';
      /** Indexes of the requests to insert, in input order. */
      insert: number[];
      /** The answer for each request, in input order. */
      answers: { runId: string; created: boolean }[];
    }
  | {
      kind: 'conflict';
      /** The first request whose key names a run (stored, or earlier in the call) with another input. */
      index: number;
      runId: string;
    };

/** Whether a run already holding a start's idempotency key was started with another input. */
export function startConflicts(existing: RunRecord, run: RunRecord): boolean {
  return existing.inputHash !== run.inputHash || existing.taskVersion !== run.taskVersion;
}

/**
 * Decides a bulk start (`createRuns`): a request whose key names a stored run answers that run (or is a conflict
 * with another input), a key used twice in the call answers the first (or conflicts), every other request is
 * inserted. `existing` maps idempotency keys to the stored runs holding them. Pure.
 */
export function planStarts(
  requests: readonly Pick<CreateRunRequest, 'run'>[],
  existing: ReadonlyMap<string, RunRecord>,
): StartsPlan {
  const insert: number[] = [];
  const answers: { runId: string; created: boolean }[] = [];
  const inCall = new Map<string, RunRecord>();
  for (const [index, { run }] of requests.entries()) {
    const key = run.idempotencyKey;
    const holder = key === null ? undefined : (inCall.get(key) ?? existing.get(key));
    if (holder !== undefined) {
      if (startConflicts(holder, run)) return { kind: 'conflict', index, runId: holder.runId };
      answers.push({ runId: holder.runId, created: false });
      continue;
    }
    if (key !== null) inCall.set(key, run);
    insert.push(index);
    answers.push({ runId: run.runId, created: true });
  }
  return { kind: 'ok', insert, answers };
}
