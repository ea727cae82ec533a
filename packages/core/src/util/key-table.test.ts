import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyTable } from './key-table.js';

describe('KeyTable', () => {
  it('gets, sets, replaces and deletes entries like a Map', () => {
    const table = new KeyTable<number>();
    expect(table.get('a')).toBeUndefined();
    expect(table.has('a')).toBe(false);
    table.set('a', 1).set('b', 2);
    table.set('a', 3);
    expect([table.get('a'), table.get('b'), table.size]).toEqual([3, 2, 2]);
    expect(table.delete('a')).toBe(true);
    expect(table.delete('a')).toBe(false);
    expect([table.has('a'), table.get('a'), table.size]).toEqual([false, undefined, 1]);
    expect(table.values()).toEqual([2]);
    table.clear();
    expect([table.size, table.values(), table.get('b')]).toEqual([0, [], undefined]);
  });

  it('finds every entry past removed slots while thousands come and go', () => {
    const table = new KeyTable<string>();
    const live: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const key = `01a238061039b016dc86ac39a${i.toString(16).padStart(7, '0')}`;
      table.set(key, key);
      live.push(key);
      // Keep ~300 entries in flight, removing the oldest, as pages settle.
      if (live.length > 300) expect(table.delete(live.shift() as string)).toBe(true);
    }
    expect(table.size).toBe(300);
    for (const key of live) expect(table.get(key)).toBe(key);
    expect(table.values().sort()).toEqual([...live].sort());
  });

  it('clears the arrays it replaces, so a removed value is not kept by them', () => {
    const table = new KeyTable<object>();
    const internals = table as unknown as { keys: string[]; slots: unknown[] };
    const first = { first: true };
    table.set('first', first);
    const oldSlots = internals.slots;
    const oldKeys = internals.keys;
    // Enough entries to make the table move to larger arrays.
    for (let i = 0; i < 64; i++) table.set(`k${i}`, {});
    expect(internals.slots).not.toBe(oldSlots);
    expect(oldSlots.every((slot) => slot === undefined)).toBe(true);
    expect(oldKeys.every((key) => key === '')).toBe(true);
    expect(table.get('first')).toBe(first);
    // A deleted entry's slot holds nothing either.
    table.delete('first');
    expect(internals.slots.includes(first)).toBe(false);
  });

  it('answers what a Map answers for any sequence of calls', () => {
    const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'ab', 'ba', '', 'long-key-0123456789abcdef');
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key, value: fc.integer() }),
      fc.record({ kind: fc.constant('delete' as const), key }),
      fc.record({ kind: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const table = new KeyTable<number>();
        const map = new Map<string, number>();
        for (const o of ops) {
          if (o.kind === 'set') {
            table.set(o.key, o.value);
            map.set(o.key, o.value);
          } else if (o.kind === 'delete') {
            expect(table.delete(o.key)).toBe(map.delete(o.key));
          } else {
            table.clear();
            map.clear();
          }
          expect(table.size).toBe(map.size);
        }
        for (const k of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'ab', 'ba', '', 'long-key-0123456789abcdef', 'zz']) {
          expect(table.get(k)).toBe(map.get(k));
          expect(table.has(k)).toBe(map.has(k));
        }
        expect(table.values().sort()).toEqual([...map.values()].sort());
      }),
    );
  });
});
