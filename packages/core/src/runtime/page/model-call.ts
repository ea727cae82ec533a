import { planModelCall } from '../../machine/commit-policy.js';
import { DocketError } from '../../util/errors.js';
import { isThenable } from '../../util/thenable.js';
import { abortError, type Engine, type InFlight } from '../queue/engine.js';
import { PURE } from '../queue/write-transition.js';
import type { ModelProvider, ModelRequest, ModelResponse } from './model.js';

/**
 * `ctx.callModel`: reserves one unit of the run's model-call budget durably, then calls the provider with the page's
 * signal. A spent budget ends the run `MODEL_CALL_BUDGET` and sends nothing; a lost lease stops the page.
 */
export async function callModel(
  engine: Engine,
  runId: string,
  token: number,
  flight: InFlight,
  provider: ModelProvider,
  request: ModelRequest,
): Promise<ModelResponse> {
  if (flight.signal().aborted) throw flight.signal().reason;
  const verdict = await engine.store.transact(
    engine.namespace,
    runId,
    (_tx, current) => {
      const planned = planModelCall(current, token, engine.workerActor, engine.now());
      return { write: planned.kind === 'lost' ? null : planned.write, value: planned };
    },
    PURE,
  );
  if (verdict.kind === 'exhausted') {
    engine.written(verdict.write);
    engine.stopLocal(runId, 'budget');
    throw abortError('budget');
  }
  if (verdict.kind === 'lost') {
    engine.stopLocal(runId, 'lease_lost');
    throw abortError('lease_lost');
  }
  const response = provider.generate({ ...request, signal: flight.signal() });
  if (!isThenable(response)) throw new DocketError('CONFIG_INVALID', 'provider.generate must return a promise');
  return response;
}
