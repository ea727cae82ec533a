// The application the child-run trials run on every store: a `fanout` task whose first page starts `query.children`
// children of the `leaf` task, whose second page records what it saw of them (`ctx.children`) in its state, and whose
// third page ends. Worker processes of both stores' trials define it here, so both trials prove the same things. The
// store fixtures pass in their own `createQueue` and store (plain JavaScript importing no package, like
// tooling/flow/app.mjs).

import { runFlowWorker } from '../flow/app.mjs';

/** The queue options every family worker shares: short polls and leases (a killed worker's runs come back soon). */
export const FAMILY_PROTOCOL = { pollMs: 20, leaseMs: 3000, heartbeatMs: 1000, recoveryLimit: 1000 };

/**
 * Defines the trial's two tasks on `queue`. With `handlers`, a leaf page calls `onLeaf(index, count)` and ends (a
 * `kill` it returns runs after the page returned: the commit and the SIGKILL race), and the fanout's pages start the
 * children, then record `{ seen, succeeded, inOrder }` of `ctx.children`, then end.
 */
export function defineFamilyTasks(queue, { handlers = true, onLeaf = () => null } = {}) {
  const leaf = queue.define(
    { name: 'leaf', version: '1' },
    handlers
      ? {
          execute(ctx) {
            const kill = onLeaf(ctx.query.index, ctx.query.count);
            const control = ctx.end();
            if (kill) setImmediate(kill);
            return control;
          },
        }
      : undefined,
  );
  const fanout = queue.define(
    { name: 'fanout', version: '1' },
    handlers
      ? {
          execute(ctx) {
            if (ctx.page === 1) {
              const count = ctx.query.children;
              const children = Array.from({ length: count }, (_, index) => ({ task: leaf, query: { index, count } }));
              return ctx.next({ started: count }, { children });
            }
            if (ctx.page === 2) {
              const seen = ctx.children;
              const inOrder = seen.every((child, i) => i === 0 || seen[i - 1].runId < child.runId);
              const succeeded = seen.filter((child) => child.status === 'success').length;
              return ctx.next({ seen: seen.length, succeeded, inOrder });
            }
            return ctx.end();
          },
        }
      : undefined,
  );
  return { leaf, fanout };
}

/**
 * A family worker process's whole job: a consumer queue on `store`; `mode` `kill-first-leaf` SIGKILLs the process
 * as its first leaf page begins (the parent's commit done, its children claimed and not settled), `kill-last-leaf`
 * right after the last leaf's page returned (racing that child's settle); `plain` runs until SIGTERM.
 */
export async function familyWorkerMain({ createQueue, store, workerId, mode }) {
  const queue = createQueue({
    store,
    // A worker that is to die claims one run at a time: the children then settle in the order given, the last last.
    runtime: { mode: 'consumer', workerId, concurrency: mode === 'plain' ? 16 : 1 },
    protocol: FAMILY_PROTOCOL,
    logger: false,
  });
  const die = () => process.kill(process.pid, 'SIGKILL');
  const onLeaf = (index, count) => {
    if (mode === 'kill-first-leaf') die();
    return mode === 'kill-last-leaf' && index === count - 1 ? die : null;
  };
  defineFamilyTasks(queue, { onLeaf });
  await runFlowWorker(queue);
}
