import type { RunRecord } from '../../machine/run-types.js';
import { type FlowHold, transitionWrite } from '../../machine/run-write.js';
import { type TransitionInput, transition } from '../../machine/state-machine.js';
import type { TransactOptions } from '../../store/contract.js';
import type { Engine } from './engine.js';

/** The hint for plans that only decide a transition: the store may group them with others. */
export const PURE: TransactOptions = Object.freeze({ pure: true });

/**
 * Writes one state-machine input for a run whose lease this page holds (or any input without a lease token), with
 * the flow `hold` it puts on the run's group or task, if any.
 */
export async function writeTransition(
  engine: Engine,
  runId: string,
  input: TransitionInput,
  hold?: (run: RunRecord) => FlowHold,
): Promise<RunRecord | null> {
  return engine.store
    .transact(
      engine.namespace,
      runId,
      (_tx, current) => {
        if (current === null) return { write: null, value: null };
        const decision = transition(current, input, engine.now());
        if (!decision.ok) return { write: null, value: null };
        const write = transitionWrite(decision);
        if (hold !== undefined) write.hold = hold(current);
        return { write, value: write };
      },
      PURE,
    )
    .then((write) => {
      engine.written(write);
      return write?.run ?? null;
    });
}
