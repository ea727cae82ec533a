// The application the chaos trials run on every store: multi-page runs whose pages write a business row in their own
// transaction and whose success callback records the run, runs that wait for an event, and a schedule that fires every
// second. Workers and the producer of both stores' trials define it here, so both trials prove the same things.
// Plain JavaScript with no imports: the store fixtures pass in their queue and their writes.

/** The retry policy of every chaos task: five attempts, short backoff (the trial counts any attempt consumed). */
export const CHAOS_POLICY = { attempts: 5, backoff: { baseMs: 5, maxMs: 50 } };

/** The queue options the chaos workers share: short polls and leases, and callbacks retried often and soon. */
export const CHAOS_PROTOCOL = { pollMs: 20, leaseMs: 3000, heartbeatMs: 1000, recoveryLimit: 1000 };
export const CHAOS_DEFAULTS = { callbackPolicy: { attempts: 50, backoff: { baseMs: 10, maxMs: 200 } } };

/** The id of the schedule the trial declares; its runs are `tick` runs. */
export const TICK_SCHEDULE = 'chaos-tick';

/**
 * Defines the trial's tasks on `queue`. `write(tx, runId, page)` writes the business row inside a page's transaction;
 * `record(runId)` records a success callback (at least once: it must ignore a second call). Handlers are given only
 * when `handlers` is true (a producer queue defines the tasks bare).
 */
export function defineChaosTasks(queue, { write, record, handlers = true }) {
  const chaos = queue.define(
    { name: 'chaos', version: '1', policy: CHAOS_POLICY, events: ['success'] },
    handlers
      ? {
          execute(ctx) {
            const page = ctx.page;
            const effect = (tx) => write(tx, ctx.runId, page);
            return page >= ctx.query.pages ? ctx.end({ effect }) : ctx.next({ page }, { effect });
          },
          onSuccess: (ctx) => record(ctx.runId),
        }
      : undefined,
  );
  const gate = queue.define(
    { name: 'gate', version: '1', policy: CHAOS_POLICY },
    handlers ? { execute: (ctx) => ctx.end({ effect: (tx) => write(tx, ctx.runId, 1) }) } : undefined,
  );
  const tick = queue.define(
    { name: 'tick', version: '1', policy: CHAOS_POLICY },
    handlers ? { execute: (ctx) => ctx.end() } : undefined,
  );
  return { chaos, gate, tick };
}

/** Calls `work` until it answers, waiting a little after each failure (the store may be losing its connections). */
async function persist(work) {
  for (let tries = 1; ; tries++) {
    try {
      return await work();
    } catch (error) {
      if (tries >= 200) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/**
 * The producer's whole job on `queue` (made ready here), safe to run again after a kill at any point: declares the schedule, starts `runs` chaos
 * runs of `pages` pages (idempotency keys `chaos:<i>`, in starts of 100), starts `gates` runs waiting for the event
 * `chaos.go` (keys `gate:<i>`), then delivers each its event (ids `go:<i>`). `onProgress(n)` is told the runs started.
 */
export async function produce(queue, tasks, { runs, pages, gates }, onProgress = () => {}) {
  await queue.ready();
  await persist(() => tasks.tick.schedule(TICK_SCHEDULE, { cron: '* * * * * *', misfire: 'skip', query: {} }));
  for (let i = 0; i < runs; i += 100) {
    const chunk = Array.from({ length: Math.min(100, runs - i) }, (_, j) => ({
      query: { i: i + j, pages },
      idempotencyKey: `chaos:${i + j}`,
    }));
    await persist(() => tasks.chaos.startMany(chunk));
    onProgress(i + chunk.length);
  }
  const waiting = [];
  for (let i = 0; i < gates; i++) {
    const trigger = { event: 'chaos.go', match: { i } };
    const { runId } = await persist(() => tasks.gate.start({ query: { i }, idempotencyKey: `gate:${i}`, trigger }));
    waiting.push(runId);
  }
  for (const [i, runId] of waiting.entries()) {
    await persist(() => queue.events.deliver(runId, { id: `go:${i}`, type: 'chaos.go', payload: { i } }));
  }
}

/**
 * The body of a chaos process: with `counts` (`[runs, pages, gates]`), the producer (starts the trial's runs and
 * events, prints `started <n>` as it goes and `produced` at the end, then exits); without, a worker (prints `ready`,
 * and on SIGTERM closes the queue, prints `closed <ms>` and exits).
 */
export async function runChaosProcess(queue, tasks, counts) {
  // A start-up that meets a killed connection exits quietly with 3: the trial starts another process in its place.
  const orExit = (error) => {
    if (!['CONNECTION_UNAVAILABLE', 'OUTCOME_UNKNOWN', 'QUEUE_FAILED'].includes(error?.code)) throw error;
    process.exit(3);
  };
  if (counts !== undefined) {
    const [runs, pages, gates] = counts.map(Number);
    await produce(queue, tasks, { runs, pages, gates }, (n) => process.stdout.write(`started ${n}\n`)).catch(orExit);
    await queue.close();
    process.stdout.write('produced\n');
    process.exit(0);
  }
  const readied = queue.ready();
  process.on('SIGTERM', async () => {
    await readied.catch(() => undefined);
    const started = Date.now();
    await queue.close();
    process.stdout.write(`closed ${Date.now() - started}\n`);
    process.exit(0);
  });
  await readied.catch(orExit);
  process.stdout.write('ready\n');
}
