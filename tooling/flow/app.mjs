// The application the flow-control trials run on every store: one task with the trial's `flow`, whose pages sleep
// `pageMs` and end, and which throws a `RetryAfterError` holding the whole task when a run asks for it. Worker
// processes of both stores' trials define it here, so both trials prove the same things. The store fixtures pass in
// their `createQueue`, store and `RetryAfterError` (plain JavaScript importing no package, like tooling/chaos/app.mjs).
import { appendFileSync } from 'node:fs';

/** The queue options every flow worker shares: short polls and leases (a killed worker's slots come back soon). */
export const FLOW_PROTOCOL = { pollMs: 20, leaseMs: 3000, heartbeatMs: 1000, recoveryLimit: 1000 };

/** The name of the trial's task; `other` is a task without limits that runs beside it. */
export const FLOW_TASK = 'limited';
export const OTHER_TASK = 'other';

/**
 * Defines the trial's two tasks on `queue` with `flow` on the limited one. With `handlers`, a page sleeps `pageMs` (or
 * its run's `query.pageMs`) and ends; a run whose query holds `holdUntil` (epoch ms) throws a task hold until then (`RetryAfterError`, from the
 * fixture's `@docket/core`), once that time is ahead; a run whose `query.stallOn` is `workerId` hangs until the process
 * is killed. `started(runId)` is told when a page of the limited task begins (after its claim committed): the trial's
 * account of when each lease was surely held.
 */
export function defineFlowTasks(
  queue,
  { flow, pageMs = 20, handlers = true, RetryAfterError, started = () => {}, workerId },
) {
  const page = (onStart) => async (ctx) => {
    onStart(ctx.runId);
    // A run that names this worker in `stallOn` never ends its page here: the trial kills this worker holding it.
    if (workerId !== undefined && ctx.query?.stallOn === workerId) await new Promise(() => {});
    const holdUntil = ctx.query?.holdUntil;
    if (typeof holdUntil === 'number' && holdUntil - Date.now() > 50) {
      throw new RetryAfterError('the provider asked to wait', { retryAfterMs: holdUntil - Date.now(), hold: 'task' });
    }
    await new Promise((resolve) => setTimeout(resolve, ctx.query?.pageMs ?? pageMs));
    return ctx.end();
  };
  const limited = queue.define(
    { name: FLOW_TASK, version: '1', flow },
    handlers ? { execute: page(started) } : undefined,
  );
  const other = queue.define({ name: OTHER_TASK, version: '1' }, handlers ? { execute: page(() => {}) } : undefined);
  return { limited, other };
}

/** Runs a flow worker until SIGTERM (then closes the queue and exits 0): prints `ready` once it claims. */
export async function runFlowWorker(queue) {
  await queue.ready();
  process.stdout.write('ready\n');
  process.on('SIGTERM', () => {
    queue.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

/**
 * A flow worker process's whole job: a consumer queue on `store` (made by the fixture with its own copy of
 * `createQueue`), the trial's tasks with `flow`, each page's start appended to `log` as `runId startMs`, until SIGTERM.
 */
export async function flowWorkerMain({ createQueue, RetryAfterError, store, workerId, flow, log }) {
  const queue = createQueue({
    store,
    runtime: { mode: 'consumer', workerId, concurrency: 16 },
    protocol: FLOW_PROTOCOL,
    logger: false,
  });
  const started = (runId) => appendFileSync(log, `${runId} ${Date.now()}\n`);
  defineFlowTasks(queue, { flow: JSON.parse(flow), RetryAfterError, started, workerId });
  await runFlowWorker(queue);
}
