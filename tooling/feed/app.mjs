// The changes-feed trial's application, run by worker and producer processes on one store: a task of three pages.
//   role `worker`: claims runs until SIGTERM; role `producer`: starts runs for `ms` milliseconds, then exits.
import { runFlowWorker } from '../flow/app.mjs';

/** Fast claims and leases, so the trial moves many runs in its seconds. */
export const FEED_PROTOCOL = { pollMs: 20, leaseMs: 5_000, heartbeatMs: 1_000 };

/** The trial's task: three pages, each its own history entries. */
export function defineFeedTask(queue, { handlers = true } = {}) {
  return queue.define(
    { name: 'feed-trial', version: '1' },
    handlers ? { execute: (ctx) => (ctx.page < 2 ? ctx.next(ctx.page + 1) : ctx.end()) } : undefined,
  );
}

/** One process of the trial: a consumer until SIGTERM, or a producer that starts runs for `ms` then exits. */
export async function feedProcessMain({ createQueue, store, id, role, ms }) {
  const mode = role === 'worker' ? 'consumer' : 'producer';
  const queue = createQueue({
    store,
    runtime: { mode, workerId: id, concurrency: 8 },
    protocol: FEED_PROTOCOL,
    logger: false,
  });
  const task = defineFeedTask(queue, { handlers: role === 'worker' });
  if (role === 'worker') return runFlowWorker(queue);
  await queue.ready();
  process.stdout.write('ready\n');
  const end = Date.now() + Number(ms);
  let i = 0;
  while (Date.now() < end) {
    await task.start({ query: i++ });
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await queue.close();
  process.exit(0);
}
