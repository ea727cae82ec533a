import type { CallbackEventRecord, HistoryEntry, RunRecord } from '../machine/run-types.js';
import type { Json } from '../util/json.js';
import { bindVerbs } from './bind-verbs.js';
import type { Store } from './contract.js';
import { claimCallbackEvents, listCallbackEvents, transactCallbackEvent } from './memory/callback-events.js';
import { changesHead, readChanges, trimChanges } from './memory/changes.js';
import { claimDue, nextDueAt, recoverExpired } from './memory/claim.js';
import { collect } from './memory/collect.js';
import { runCommand } from './memory/commands.js';
import { getDefinition, listTasks, registerDefinition } from './memory/definitions.js';
import { listChildren, listRuns, runReads } from './memory/reads.js';
import { dueSchedules, listSchedules, transactSchedule } from './memory/schedules.js';
import { createRun, createRuns } from './memory/start.js';
import { clone, key, MemoryState } from './memory/state.js';
import { type MemoryTransaction, transact } from './memory/transact.js';

export type { MemoryTransaction };

/** Options of `memoryStore()`. */
export interface MemoryStoreOptions {
  /** Allow async plans (checks and effects) like a server database; default `false`, like SQLite. */
  asyncTransactions?: boolean;
}

/** Direct readers of what the memory store holds, for tests that check what was written. */
export interface MemoryStoreRaw {
  /** A copy of one run row. */
  run(namespace: string, runId: string): RunRecord | undefined;
  /** A copy of one run's history rows. */
  history(namespace: string, runId: string): HistoryEntry[];
  /** Copies of a namespace's callback event rows. */
  events(namespace: string): CallbackEventRecord[];
  /** A copy of an application table written through the transaction handle. */
  appRows(table: string): Map<string, Json>;
  /** How many runs the store holds, in every namespace. */
  runCount(): number;
  /** Everything the store holds as one canonical string, to prove an operation changed nothing. */
  dump(): string;
}

/** The in-memory reference `Store`: one process, no persistence, every guarantee of the contract. */
export interface MemoryStore extends Store<MemoryTransaction> {
  readonly raw: MemoryStoreRaw;
}

/** Creates the in-memory reference store. */
export function memoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const m = new MemoryState({ asyncTransactions: options.asyncTransactions ?? false, multiProcess: false });
  const raw: MemoryStoreRaw = {
    run: (namespace, runId) => clone(m.runs.get(key(namespace, runId))),
    history: (namespace, runId) => clone(m.history.get(key(namespace, runId)) ?? []),
    events: (namespace) => [...m.events.values()].filter((e) => e.namespace === namespace).map(clone),
    appRows: (table) => new Map(m.appTables.get(table) ?? []),
    runCount: () => m.runs.size,
    dump: () => m.dump(),
  };
  return {
    name: 'memory',
    capabilities: m.capabilities,
    raw,
    async open() {},
    async close() {},
    ...bindVerbs<MemoryState, MemoryTransaction>(m, {
      registerDefinition,
      listTasks,
      getDefinition,
      createRun,
      createRuns,
      transactSchedule,
      dueSchedules,
      listSchedules,
      ...runReads,
      transact,
      claimDue,
      recoverExpired,
      nextDueAt,
      claimCallbackEvents,
      transactCallbackEvent,
      listCallbackEvents,
      listRuns,
      listChildren,
      runCommand,
      collect,
      readChanges,
      changesHead,
      trimChanges,
    }),
  };
}
