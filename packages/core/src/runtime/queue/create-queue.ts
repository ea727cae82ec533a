import type { Store } from '../../store/contract.js';
import { DocketError } from '../../util/errors.js';
import type { Json } from '../../util/json.js';
import { createOperator, type Operator } from '../operator/operator.js';
import { type BatchTask, createBatchTask } from '../task/batch-task.js';
import { assertHandlers, resolveDefinition, type TaskDefinition } from '../task/definition.js';
import { type DeliverResult, deliverEvent } from '../task/deliver-trigger.js';
import type { TaskHandlers, TriggerEvent } from '../task/handlers.js';
import { Engine, type RegisteredTask } from './engine.js';
import { type CloseResult, QueueLifecycle, type QueueState } from './lifecycle.js';
import { type QueueOptions, resolveQueueOptions } from './options.js';
import { type WatchedChange, type WatchOptions, watchChanges } from './watch.js';

export type { CloseResult, QueueState };

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
  /**
   * The changes feed as an async iterator: waits for new entries and returns when `signal` aborts or the queue
   * closes. Each change carries the cursor that resumes the feed after it.
   */
  watch(options?: WatchOptions): AsyncIterableIterator<WatchedChange>;
}

/** The options of `createQueue`, with the store's transaction type carried to effects and checks. */
export type CreateQueueOptions<Tx> = Omit<QueueOptions, 'store'> & { store: Store<Tx> };

/** The transaction type of a store, or the union of them when the store is chosen at run time from several. */
// biome-ignore lint/suspicious/noExplicitAny: matches a store of any transaction type.
export type TransactionOf<S> = S extends Store<infer Tx> ? Tx : S extends Store<any> ? unknown : never;

/**
 * Creates a queue; validates every option (`CONFIG_INVALID`) and starts nothing until `ready()`. The store may be
 * chosen at run time (`cond ? sqliteStore(...) : postgresStore(...)`): effects and checks then receive the union of
 * the stores' transaction types.
 */
// biome-ignore lint/suspicious/noExplicitAny: matches a store of any transaction type.
export function createQueue<S extends Store<any>>(
  options: Omit<QueueOptions, 'store'> & { store: S },
): Queue<TransactionOf<S>>;
/** Creates a queue on a store whose transaction type is given explicitly. */
export function createQueue<Tx = unknown>(options: CreateQueueOptions<Tx>): Queue<Tx>;
export function createQueue<Tx = unknown>(options: CreateQueueOptions<Tx>): Queue<Tx> {
  const resolved = resolveQueueOptions(options);
  const engine = new Engine(resolved);
  const mode = resolved.runtime.mode;
  const lifecycle = new QueueLifecycle(engine, resolved);
  const assertUsable = (operation: string) => lifecycle.assertUsable(operation);
  const guards = { assertUsable, mode: () => mode };
  const probes = () => lifecycle.probes();
  const operator = createOperator(engine, assertUsable, probes);

  return {
    get state() {
      return lifecycle.state;
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
      if (lifecycle.state !== 'created') {
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
      return createBatchTask<Q, S>(engine, registered, guards, () => lifecycle.workers);
    },

    ready: () => lifecycle.ready(),
    close: () => lifecycle.close(),
    watch(options) {
      assertUsable('queue.watch');
      return watchChanges(engine, options);
    },
  };
}
