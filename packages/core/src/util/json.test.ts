import { describe, expect, it } from 'vitest';
import { isDocketError } from './errors.js';
import { assertJson, canonicalJson } from './json.js';

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

describe('canonicalJson', () => {
  it('sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [{ f: 1, e: 2 }] } })).toBe('{"a":{"c":[{"e":2,"f":1}],"d":2},"b":1}');
  });
});
