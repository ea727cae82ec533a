import { DocketError } from './errors.js';

/** A plain JSON value, as Docket stores queries, states, events and details. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Size limits a JSON value must respect. */
export interface JsonLimits {
  bytes: number;
  nodes: number;
  depth: number;
}

/** The node and depth limits every stored JSON value shares. */
export const JSON_STRUCTURE_LIMITS = { nodes: 10_000, depth: 64 } as const;

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'bigint') return 'a BigInt';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (value instanceof Date) return 'a Date';
  if (typeof value === 'object' && value !== null) return `an instance of ${value.constructor?.name ?? 'a class'}`;
  return typeof value;
}

/**
 * Checks that `value` is plain JSON within `limits`, or throws `JSON_INVALID` / `PAYLOAD_TOO_LARGE`.
 * `what` names the value in messages (for example `query`). Prefer `jsonSnapshot`, which answers what it checked.
 */
export function assertJson(value: unknown, what: string, limits: JsonLimits, operation: string): asserts value is Json {
  jsonSnapshot(value, what, limits, operation);
}

/**
 * A plain copy of `value`, read once (each property's getter runs once), checked against `limits` and answered: the
 * value a caller checks is the value it stores. Throws `JSON_INVALID` for what JSON cannot hold (a class instance, a
 * function, a symbol key, a non-finite number, a hole or an extra own key of an array, a cycle) and
 * `PAYLOAD_TOO_LARGE` past a limit. Depth counts containers: a scalar inside 64 nested arrays is 64 levels deep.
 */
export function jsonSnapshot(value: unknown, what: string, limits: JsonLimits, operation: string): Json {
  const walk = new SnapshotWalk(what, limits, operation);
  const copy = walk.copy(value, 0);
  const bytes = Buffer.byteLength(JSON.stringify(copy), 'utf8');
  if (bytes > limits.bytes) {
    throw new DocketError('PAYLOAD_TOO_LARGE', `${what} is ${bytes} bytes, more than the limit of ${limits.bytes}`, {
      operation,
      details: { path: what, limit: limits.bytes, bytes, kind: 'bytes' },
    });
  }
  return copy;
}

/**
 * One `jsonSnapshot` walk: the nodes counted so far, and the containers and keys on the current path. The path is
 * kept as keys and written out only for an error, so a value that passes costs no string building.
 */
class SnapshotWalk {
  private nodes = 0;
  private readonly onPath = new Set<object>();
  private readonly keys: (string | number)[] = [];

  constructor(
    private readonly what: string,
    private readonly limits: JsonLimits,
    private readonly operation: string,
  ) {}

  copy(node: unknown, depth: number): Json {
    if (++this.nodes > this.limits.nodes) {
      throw new DocketError('PAYLOAD_TOO_LARGE', `${this.what} has more than ${this.limits.nodes} JSON nodes`, {
        operation: this.operation,
        details: { path: this.what, limit: this.limits.nodes, kind: 'nodes' },
      });
    }
    if (node === null || typeof node === 'string' || typeof node === 'boolean') return node;
    if (typeof node === 'number') return Number.isFinite(node) ? node : this.invalid(node);
    if (typeof node !== 'object') return this.invalid(node);
    if (depth + 1 > this.limits.depth) {
      throw new DocketError('PAYLOAD_TOO_LARGE', `${this.what} is nested deeper than ${this.limits.depth} levels`, {
        operation: this.operation,
        details: { path: this.path(), limit: this.limits.depth, kind: 'depth' },
      });
    }
    if (this.onPath.has(node)) {
      throw new DocketError('JSON_INVALID', `${this.path()} is not JSON: it contains a cycle`, {
        operation: this.operation,
        details: { path: this.path() },
      });
    }
    this.onPath.add(node);
    const copied = Array.isArray(node) ? this.copyArray(node, depth + 1) : this.copyObject(node, depth + 1);
    this.onPath.delete(node);
    return copied;
  }

  private copyArray(node: unknown[], depth: number): Json[] {
    const keys = Reflect.ownKeys(node);
    // An array's own keys are its indexes and `length`: anything more is something JSON would drop.
    if (keys.length !== node.length + 1) {
      const extra = keys.find((k) => k !== 'length' && (typeof k !== 'string' || !/^(0|[1-9]\d*)$/.test(k)));
      if (extra !== undefined) return this.invalid('an extra array key', String(extra));
      let hole = 0;
      while (hole in node) hole++;
      return this.invalid(undefined, hole);
    }
    const out: Json[] = new Array(node.length);
    for (let i = 0; i < node.length; i++) {
      this.keys.push(i);
      out[i] = this.copy(node[i], depth);
      this.keys.pop();
    }
    return out;
  }

  private copyObject(node: object, depth: number): { [key: string]: Json } {
    const proto = Object.getPrototypeOf(node);
    if (proto !== Object.prototype && proto !== null) return this.invalid(node);
    if (Object.getOwnPropertySymbols(node).length > 0) return this.invalid(Symbol());
    const out: { [key: string]: Json } = {};
    for (const key of Object.keys(node)) {
      this.keys.push(key);
      const child = this.copy((node as Record<string, unknown>)[key], depth);
      this.keys.pop();
      // An own `__proto__` key stays a key instead of setting the copy's prototype.
      if (key === '__proto__') {
        Object.defineProperty(out, key, { value: child, enumerable: true, writable: true, configurable: true });
      } else {
        out[key] = child;
      }
    }
    return out;
  }

  /** The current path as the messages write it: `query.items[2].name`, with `last` (a key or index) appended. */
  private path(last?: string | number): string {
    let text = this.what;
    const keys = last === undefined ? this.keys : [...this.keys, last];
    for (const key of keys) text += typeof key === 'number' ? `[${key}]` : `.${key}`;
    return text;
  }

  /** `JSON_INVALID` for `node` at the current path (`last` appended: an array's hole or extra key). */
  private invalid(node: unknown, last?: string | number): never {
    const described = node === 'an extra array key' ? node : describe(node);
    const path = this.path(last);
    throw new DocketError('JSON_INVALID', `${path} is not JSON: ${described}`, {
      operation: this.operation,
      details: { path },
    });
  }
}

/** JSON with object keys sorted at every level, so equal values always give equal strings. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    // No prototype: an own `__proto__` key (JSON.parse makes one) stays a key instead of setting the prototype.
    const out: Record<string, unknown> = Object.create(null);
    for (const key of Object.keys(value).sort()) {
      const child = (value as Record<string, unknown>)[key];
      if (child !== undefined) out[key] = sortKeys(child);
    }
    return out;
  }
  return value;
}

/** A deep copy that is deeply frozen, so handlers cannot mutate stored values in place. */
export function frozenCopy<T extends Json | null>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  return deepFreeze(structuredClone(value));
}

/** Freezes a value the caller owns (a fresh copy read from a store) in place, without copying it. */
export function deepFreeze<T>(value: T): T {
  freezeAll(value);
  return value;
}

function freezeAll(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  // Read key by key rather than through `Object.values`: every page freezes its query, and that array was garbage.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) freezeAll(value[i]);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (Object.hasOwn(record, key)) freezeAll(record[key]);
  }
}
