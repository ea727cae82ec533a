import type { Store } from './contract.js';

/** The `Store` methods a store implements as verbs: everything but its name, capabilities, lifecycle and listener. */
export const STORE_VERB_NAMES = [
  'registerDefinition',
  'listTasks',
  'getDefinition',
  'createRun',
  'createRuns',
  'transactSchedule',
  'dueSchedules',
  'listSchedules',
  'getRun',
  'getHistory',
  'callbackCounts',
  'callbackCountsOf',
  'runStats',
  'settledPerMinute',
  'transact',
  'claimDue',
  'recoverExpired',
  'nextDueAt',
  'claimCallbackEvents',
  'transactCallbackEvent',
  'listCallbackEvents',
  'listRuns',
  'listChildren',
  'runCommand',
  'collect',
  'readChanges',
  'changesHead',
  'trimChanges',
] as const satisfies readonly (keyof Store)[];

/** One of `STORE_VERB_NAMES`. */
export type StoreVerbName = (typeof STORE_VERB_NAMES)[number];

/** A store's verbs as functions that take the store's context `C` first, then the method's own arguments. */
export type StoreVerbs<C, Tx = unknown> = {
  [K in StoreVerbName]: (ctx: C, ...args: Parameters<Store<Tx>[K]>) => ReturnType<Store<Tx>[K]>;
};

/**
 * The `Store` methods of a store written verb by verb: each verb bound to the store's context (a bound function,
 * which V8 calls as fast as a closure).
 */
export function bindVerbs<C, Tx>(ctx: C, verbs: StoreVerbs<C, Tx>): Pick<Store<Tx>, StoreVerbName> {
  const bound: Record<string, unknown> = {};
  for (const name of Object.keys(verbs) as StoreVerbName[]) {
    bound[name] = (verbs[name] as (ctx: C, ...args: unknown[]) => unknown).bind(undefined, ctx);
  }
  return bound as unknown as Pick<Store<Tx>, StoreVerbName>;
}
