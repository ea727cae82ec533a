import { describe, expect, it } from 'vitest';
import { isDocketError } from './errors.js';
import { assertJson, canonicalJson, JSON_STRUCTURE_LIMITS, jsonSnapshot } from './json.js';

const limits = { bytes: 1000, nodes: 100, depth: 8 };
const check = (value: unknown) => () => assertJson(value, 'query', limits, 'test');

describe('assertJson', () => {
  it('accepts plain JSON', () => {
    expect(check({ a: [1, 'x', true, null, { b: 2.5 }] })).not.toThrow();
    expect(check(Object.assign(Object.create(null), { a: 1 }))).not.toThrow();
  });
  it.each([
    ['undefined', undefined],
    ['a nested undefined', { a: undefined }],
    ['a function', () => 1],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a Date', new Date()],
    ['a BigInt', 1n],
    ['a Map', new Map()],
    ['a class instance', new (class Foo {})()],
    // biome-ignore lint/suspicious/noSparseArray: a hole is exactly what this case feeds in.
    ['a sparse array', [1, , 3]],
    ['a symbol', Symbol('s')],
  ])('refuses %s with JSON_INVALID', (_name, value) => {
    let error: unknown;
    try {
      check(value)();
    } catch (e) {
      error = e;
    }
    expect(isDocketError(error, 'JSON_INVALID')).toBe(true);
  });
  it('refuses cycles', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(check(a)).toThrow(/cycle/);
  });
  it('refuses values over the byte, node and depth limits with PAYLOAD_TOO_LARGE', () => {
    for (const value of ['x'.repeat(2000), Array.from({ length: 200 }, () => 1), [[[[[[[[[[1]]]]]]]]]]]) {
      let error: unknown;
      try {
        check(value)();
      } catch (e) {
        error = e;
      }
      expect(isDocketError(error, 'PAYLOAD_TOO_LARGE')).toBe(true);
    }
  });
  it('accepts a value that is the same object twice but not a cycle', () => {
    const shared = { x: 1 };
    expect(check({ a: shared, b: shared })).not.toThrow();
  });
});

describe('jsonSnapshot', () => {
  const snapshot = (value: unknown, bytes = 1000) =>
    jsonSnapshot(value, 'query', { bytes, ...JSON_STRUCTURE_LIMITS }, 'test');
  const codeOf = (call: () => unknown) => {
    try {
      call();
    } catch (error) {
      return isDocketError(error) ? error.code : 'not a DocketError';
    }
    return 'accepted';
  };

  it('reads each getter once and answers the value it checked, not a later read', () => {
    let reads = 0;
    const tricky = {
      get note() {
        reads++;
        return reads === 1 ? 'short' : 'x'.repeat(100_000);
      },
    };
    const copy = snapshot(tricky);
    expect(reads).toBe(1);
    expect(copy).toEqual({ note: 'short' });
    expect(JSON.stringify(copy).length).toBeLessThan(1000);
  });

  it('refuses an array with an extra own key instead of dropping it', () => {
    const list = Object.assign([1, 2], { extra: 'kept?' });
    expect(codeOf(() => snapshot(list))).toBe('JSON_INVALID');
  });

  it('counts depth in containers: 64 nested arrays are within 64 levels, 65 are not', () => {
    const nest = (levels: number) => {
      let value: unknown = null;
      for (let i = 0; i < levels; i++) value = [value];
      return value;
    };
    expect(codeOf(() => snapshot(nest(64)))).toBe('accepted');
    expect(codeOf(() => snapshot(nest(65)))).toBe('PAYLOAD_TOO_LARGE');
  });

  it('keeps an own __proto__ key as a key of the copy', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
    const copy = snapshot(value) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it('names the path of what it refuses: keys, indexes, holes, extra array keys, cycles and depth', () => {
    const pathOf = (value: unknown, depth = 8) => {
      try {
        jsonSnapshot(value, 'query', { bytes: 1000, nodes: 100, depth }, 'test');
      } catch (error) {
        return isDocketError(error) ? (error.details as { path: string }).path : 'not a DocketError';
      }
      return 'accepted';
    };
    expect(pathOf({ items: [{ ok: 1 }, { when: new Date() }] })).toBe('query.items[1].when');
    // biome-ignore lint/suspicious/noSparseArray: a hole is exactly what this case feeds in.
    expect(pathOf({ list: [1, , 3] })).toBe('query.list[1]');
    expect(pathOf({ list: Object.assign([1], { extra: true }) })).toBe('query.list.extra');
    const loop: Record<string, unknown> = { a: {} };
    (loop.a as Record<string, unknown>).back = loop;
    expect(pathOf(loop)).toBe('query.a.back');
    expect(pathOf({ a: [[1]] }, 2)).toBe('query.a[0]');
    expect(pathOf([{ fn: () => 1 }])).toBe('query[0].fn');
    expect(pathOf({ ok: [1, 2], next: { n: Number.NaN } })).toBe('query.next.n');
  });

  it('is a copy: changing the input afterwards does not change it', () => {
    const input = { list: [1, 2] };
    const copy = snapshot(input);
    input.list.push(3);
    expect(copy).toEqual({ list: [1, 2] });
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [{ f: 1, e: 2 }] } })).toBe('{"a":{"c":[{"e":2,"f":1}],"d":2},"b":1}');
  });
});
