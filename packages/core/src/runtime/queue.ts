import type { Store } from '../store/contract.js';
import { DocketError } from '../util/errors.js';
import type { Json } from '../util/json.js';
import { CallbackLoop } from './callback-loop.js';
import { type QueueOptions, resolveQueueOptions } from './config.js';
import { assertHandlers, resolveDefinition, type TaskDefinition } from './definition.js';
import { Engine, type RegisteredTask } from './engine.js';
import type { TaskHandlers, TriggerEvent } from './handlers.js';
import { createOperator, type Operator } from './operator.js';
import { type BatchTask, createBatchTask } from './task.js';
import { type DeliverResult, deliverEvent } from './triggers.js';
import { WorkerLoop } from './worker.js';

/** A queue's lifecycle: `created → starting → ready → closing → closed`, or `failed` when `ready()` fails. */
export type QueueState = 'created' | 'starting' | 'ready' | 'closing' | 'closed' | 'failed';

/** What `queue.close()` resolves. */
export interface CloseResult {
  status: 'closed';
  /** True when pages were still running after `closeGraceMs` and had to be aborted and released. */
  timedOut: boolean;
  remainingExecutions: number;
  remainingCallbacks: number;
}

/** A Docket queue: defines tasks, starts its workers at `ready()`, and stops them at `close()`. */
export interface Queue<Tx = unknown> {
  /** The queue's lifecycle state now. */
  readonly state: QueueState;
  readonly namespace: string;
  /** Defines a task; only before `ready()`. Handlers are required in `all`/`consumer` mode, refused in `producer`. */
  define<Q = Json, S = Json>(definition: TaskDefinition, handlers?: TaskHandlers<Q, S, Tx>): BatchTask<Q, S>;
  /** Opens the store (migrations), registers the definitions, then starts workers in `all`/`consumer` mode. */
  ready(): Promise<void>;
  /** Stops claiming, waits up to `closeGraceMs`, then aborts and releases pages still running. */
  close(): Promise<CloseResult>;
  /** Trigger events for runs started with `trigger: { event }`. */
  readonly events: {
    /** Delivers an event to a waiting run (see `DeliverResult`). */
    deliver(runId: string, event: TriggerEvent): Promise<DeliverResult>;
  };
  /** The operator API: list, pause, resume and cancel runs; dead letters; retention; health. */
  readonly operator: Operator;
}

/** The options of `createQueue`, with the store's transaction type carried to effects and checks. */
export type CreateQueueOptions<Tx> = Omit<QueueOptions, 'store'> & { store: Store<Tx> };

/** Creates a queue; validates every option (`CONFIG_INVALID`) and starts nothing until `ready()`. */
export function createQueue<Tx = unknown>(options: CreateQueueOptions<Tx>): Queue<Tx> {
  const resolved = resolveQueueOptions(options);
  const engine = new Engine(resolved);
  const mode = resolved.runtime.mode;
  let state: QueueState = 'created';
  let readyPromise: Promise<void> | null = null;
  let closePromise: Promise<CloseResult> | null = null;
  let workers: WorkerLoop | null = null;
  let callbacks: CallbackLoop | null = null;
  let storeOpened = false;

  const assertUsable = (operation: string): void => {
    if (state === 'ready') return;
    if (state === 'created' || state === 'starting') {
      throw new DocketError('QUEUE_NOT_READY', 'call await queue.ready() first', { operation });
    }
    if (state === 'closing') throw new DocketError('QUEUE_CLOSING', 'the queue is closing', { operation });
    if (state === 'closed') throw new DocketError('QUEUE_CLOSED', 'the queue is closed', { operation });
    throw new DocketError('QUEUE_FAILED', 'the queue failed to start', { operation });
  };
  const guards = { assertUsable, mode: () => mode };
  const probes = (): string[] => {
    const reasons: string[] = [];
    if (workers?.lastError) reasons.push(`workers: ${(workers.lastError as Error).message}`);
    if (callbacks?.lastError) reasons.push(`callbacks: ${(callbacks.lastError as Error).message}`);
    return reasons;
  };
  const operator = createOperator(engine, assertUsable, probes);

  return {
    get state() {
      return state;
    },
    namespace: resolved.namespace,
    operator,
    events: {
      deliver(runId, event) {
        assertUsable('events.deliver');
        return deliverEvent(engine, runId, event);
      },
    },

    define<Q = Json, S = Json>(definition: TaskDefinition, handlers?: TaskHandlers<Q, S, Tx>): BatchTask<Q, S> {
      const operation = 'queue.define';
      if (state !== 'created') {
        throw new DocketError('CONFIG_INVALID', 'define every task before queue.ready()', { operation });
      }
      const def = resolveDefinition(definition, resolved.defaults.policy);
      assertHandlers(handlers);
      if (mode === 'producer' && handlers !== undefined) {
        throw new DocketError('MODE_OPERATION_NOT_ALLOWED', 'a producer queue defines tasks without handlers', {
          operation,
        });
      }
      if (mode !== 'producer' && typeof handlers?.execute !== 'function') {
        throw new DocketError('CONFIG_INVALID', `task ${def.name} needs handlers.execute in ${mode} mode`, {
          operation,
          details: { path: 'handlers.execute' },
        });
      }
      for (const task of engine.tasks.values()) {
        if (task.definition.name === def.name) {
          throw new DocketError('CONFIG_INVALID', `task ${def.name} is already defined in this queue`, { operation });
        }
      }
      const registered: RegisteredTask = {
        definition: def,
        handlers: (handlers as RegisteredTask['handlers']) ?? null,
      };
      engine.tasks.set(`${def.name}@${def.version}`, registered);
      return createBatchTask<Q, S>(engine, registered, guards, () => workers);
    },

    ready() {
      if (state === 'closing' || state === 'closed') return Promise.reject(lifecycleError(state, 'queue.ready'));
      if (readyPromise) return readyPromise;
      if (state !== 'created') return Promise.reject(lifecycleError(state, 'queue.ready'));
      state = 'starting';
      readyPromise = (async () => {
        try {
          await resolved.store.open();
          storeOpened = true;
          for (const task of engine.tasks.values()) {
            await resolved.store.registerDefinition({
              namespace: resolved.namespace,
              name: task.definition.name,
              version: task.definition.version,
              hash: task.definition.hash,
              definition: task.definition.canonical,
            });
          }
          if (mode !== 'producer') {
            workers = new WorkerLoop(engine);
            workers.start();
            const loop = new CallbackLoop(engine);
            callbacks = loop;
            engine.onEventsWritten = () => loop.wake();
            loop.start();
          }
          state = 'ready';
        } catch (error) {
          state = 'failed';
          if (storeOpened) await resolved.store.close().catch(() => undefined);
          throw error;
        }
      })();
      return readyPromise;
    },

    close() {
      if (closePromise) return closePromise;
      closePromise = (async (): Promise<CloseResult> => {
        const wasReady = state === 'ready';
        if (readyPromise && state === 'starting') await readyPromise.catch(() => undefined);
        state = 'closing';
        let timedOut = false;
        let remainingExecutions = 0;
        if (workers) {
          await workers.stopClaiming();
          const drained = await waitFor(workers.drain(), resolved.runtime.closeGraceMs);
          if (!drained) {
            timedOut = true;
            remainingExecutions = engine.inflight.size;
            for (const flight of engine.inflight.values()) engine.stopLocal(flight.runId, 'close');
            await workers.drain();
          }
        }
        let remainingCallbacks = 0;
        if (callbacks) {
          await callbacks.stopClaiming();
          const delivered = await waitFor(callbacks.drain(), timedOut ? 0 : resolved.runtime.closeGraceMs);
          if (!delivered) {
            timedOut = true;
            remainingCallbacks = await callbacks.abortAll();
          }
        }
        engine.dispose();
        if (storeOpened || wasReady) {
          storeOpened = false;
          await resolved.store.close();
        }
        state = 'closed';
        return { status: 'closed', timedOut, remainingExecutions, remainingCallbacks };
      })();
      return closePromise;
    },
  };
}

function lifecycleError(state: QueueState, operation: string): DocketError {
  if (state === 'closing') return new DocketError('QUEUE_CLOSING', 'the queue is closing', { operation });
  if (state === 'closed') return new DocketError('QUEUE_CLOSED', 'the queue is closed', { operation });
  if (state === 'failed') return new DocketError('QUEUE_FAILED', 'the queue failed to start', { operation });
  return new DocketError('QUEUE_NOT_READY', 'ready() is already in progress', { operation });
}

async function waitFor(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const result = await Promise.race([promise.then(() => true as const), timeout]);
  clearTimeout(timer);
  return result;
}
