import { afterEach, describe } from 'vitest';
import { createQueue, type Queue } from '../runtime/queue/create-queue.js';
import type { BatchTask } from '../runtime/task/batch-task.js';
import type { TaskDefinition } from '../runtime/task/definition.js';
import type { TaskHandlers } from '../runtime/task/handlers.js';
import type { Store } from '../store/contract.js';
import type { Json } from '../util/json.js';

export { type ManualClock, manualClock, sleep, waitFor, waitForStatus } from './helpers.js';

/** What a store's test gives the conformance suite: a fresh store and ways to check what it really wrote. */
export interface ConformanceHarness<Tx = unknown> {
  /** A store on fresh, empty data. */
  store: Store<Tx>;
  /** Another store object on the same data (a second connection); the same object where there is only one. */
  secondStore(): Store<Tx>;
  /** Writes one application row with `key` inside an effect's transaction (a store with async transactions may return a promise, which the effect returns). */
  // biome-ignore lint/suspicious/noConfusingVoidType: an effect may return nothing (void) or a promise.
  writeAppRow(tx: Tx, key: string): void | PromiseLike<unknown>;
  /** Counts the application rows with `key`, read directly from the database. */
  countAppRows(key: string): Promise<number>;
  /** Raw readers of Docket's own rows, bypassing the store's getters. */
  raw: {
    /** The run's stored status and revision, or `null`. */
    run(runId: string): Promise<{ status: string; revision: number } | null>;
    /** How many history rows the run has. */
    historyCount(runId: string): Promise<number>;
  };
  /** Frees files and connections after the test. */
  cleanup(): Promise<void>;
}

/** Makes a fresh harness for one test. */
export type HarnessFactory<Tx = unknown> = () => Promise<ConformanceHarness<Tx>>;

/** Options for `openQueue`: anything `createQueue` takes except the store. */
export type TestQueueOptions = Omit<Parameters<typeof createQueue>[0], 'store'>;

/**
 * Creates a queue on `store` with fast test defaults (pollMs 10; no logger unless one is given: the runs that fail on
 * purpose would fill the test output), defines one task, and waits for `ready()`.
 */
export async function openQueue<Tx, Q = Json, S = Json>(
  store: Store<Tx>,
  definition: TaskDefinition,
  handlers: TaskHandlers<Q, S, Tx> | undefined,
  options: TestQueueOptions = {},
): Promise<{ queue: Queue<Tx>; task: BatchTask<Q, S> }> {
  const queue = createQueue<Tx>({
    logger: false,
    ...options,
    store,
    protocol: { pollMs: 10, ...options.protocol },
    defaults: {
      ...options.defaults,
      policy: { backoff: { baseMs: 1, maxMs: 5 }, ...options.defaults?.policy },
    },
  });
  const task = queue.define<Q, S>(definition, handlers);
  await queue.ready();
  return { queue, task };
}

/**
 * The queues a conformance test opens: closed after each test, then the harness `current()` returns is cleaned up.
 * Call it inside a `describe`.
 */
export function closeAfterEach<Tx>(current: () => ConformanceHarness<Tx> | undefined): Queue<Tx>[] {
  const queues: Queue<Tx>[] = [];
  afterEach(async () => {
    for (const queue of queues.splice(0)) await queue.close();
    await current()?.cleanup();
  });
  return queues;
}

/** What the tests of one conformance area share: a fresh harness per test, and the queues closed after it. */
export interface Area<Tx> {
  /** Makes this test's harness; it is cleaned up after the test, once its queues are closed. */
  harness(): Promise<ConformanceHarness<Tx>>;
  /** Closes these queues after this test. */
  track(...queues: Queue<Tx>[]): void;
  /** `openQueue`, with the queue closed after this test. */
  open<Q = Json, S = Json>(
    store: Store<Tx>,
    definition: TaskDefinition,
    handlers: TaskHandlers<Q, S, Tx> | undefined,
    options?: TestQueueOptions,
  ): Promise<{ queue: Queue<Tx>; task: BatchTask<Q, S> }>;
  /** The queues this test opened or tracked, in order. */
  readonly queues: readonly Queue<Tx>[];
  /** This test's harness, made by `harness()`. */
  readonly h: ConformanceHarness<Tx>;
}

/** Declares one area of the conformance suite: a `describe` whose tests get `area` (see `Area`). */
export function describeArea<Tx>(title: string, factory: HarnessFactory<Tx>, body: (area: Area<Tx>) => void): void {
  describe(title, () => {
    let current: ConformanceHarness<Tx> | undefined;
    const queues = closeAfterEach<Tx>(() => current);
    body({
      async harness() {
        current = await factory();
        return current;
      },
      track: (...opened) => {
        queues.push(...opened);
      },
      async open(store, definition, handlers, options) {
        const opened = await openQueue(store, definition, handlers, options);
        queues.push(opened.queue);
        return opened;
      },
      queues,
      get h() {
        if (current === undefined) throw new Error('call area.harness() first');
        return current;
      },
    });
  });
}
