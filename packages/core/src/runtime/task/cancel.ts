import { isTerminal, type RunRecord } from '../../machine/run-types.js';
import { transitionWrite } from '../../machine/run-write.js';
import { transition } from '../../machine/state-machine.js';
import type { RunWrite } from '../../store/contract.js';
import type { TaskScope } from './task-scope.js';

/** What `task.cancel` answers. */
export type CancelResult =
  | { found: false; runId: string }
  | { found: true; runId: string; status: RunRecord['status']; revision: number; changed: boolean };

/** `task.cancel`: cancels a live run of the task in one pure transaction; a terminal run is left as it is. */
export async function cancelRun<Q, S>(scope: TaskScope<Q, S>, runId: string): Promise<CancelResult> {
  const operation = 'task.cancel';
  const { engine } = scope;
  scope.guards.assertUsable(operation);
  const existing = await scope.load(runId, operation);
  if (!existing) return { found: false, runId };
  const result = await engine.store.transact<{ run: RunRecord; write: RunWrite | null } | null>(
    engine.namespace,
    runId,
    (_tx, current) => {
      if (current === null) return { write: null, value: null };
      if (isTerminal(current.status)) return { write: null, value: { run: current, write: null } };
      const decision = transitionCancel(current, engine.now());
      return { write: decision, value: { run: decision.run, write: decision } };
    },
    { pure: true },
  );
  if (result === null) return { found: false, runId };
  engine.written(result.write);
  if (result.write) engine.stopLocal(runId, 'cancelled');
  const { status, revision } = result.run;
  return { found: true, runId, status, revision, changed: result.write !== null };
}

function transitionCancel(current: RunRecord, now: number): RunWrite {
  const decision = transition(current, { type: 'cancel', actor: 'producer', reason: 'CANCELLED' }, now);
  if (!decision.ok) throw new Error(`internal: cancel refused: ${decision.message}`);
  return transitionWrite(decision);
}
