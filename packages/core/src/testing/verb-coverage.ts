import { STORE_VERB_NAMES, type StoreVerbName } from '../store/bind-verbs.js';
import type { Store } from '../store/contract.js';
import type { HarnessFactory } from './harness.js';

const VERBS: ReadonlySet<string> = new Set(STORE_VERB_NAMES);

/**
 * A harness factory whose stores record each store verb called on them into `called`: the conformance suite checks
 * with it that an area really exercises the verbs it says it covers. The store is wrapped, never changed: every call
 * reaches the store's own method with the store as `this`.
 */
export function recordingVerbs<Tx>(factory: HarnessFactory<Tx>, called: Set<StoreVerbName>): HarnessFactory<Tx> {
  const wrap = (store: Store<Tx>): Store<Tx> =>
    new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof property !== 'string' || !VERBS.has(property) || typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          called.add(property as StoreVerbName);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return async () => {
    const harness = await factory();
    const wrapped = wrap(harness.store);
    return {
      ...harness,
      store: wrapped,
      secondStore: () => {
        const other = harness.secondStore();
        return other === harness.store ? wrapped : wrap(other);
      },
    };
  };
}

/** The store verbs that no area of `areas` lists: each must be covered by some area. */
export function uncoveredVerbs(areas: Readonly<Record<string, { verbs: readonly StoreVerbName[] }>>): StoreVerbName[] {
  const covered = new Set(Object.values(areas).flatMap((area) => area.verbs));
  return STORE_VERB_NAMES.filter((verb) => !covered.has(verb));
}
