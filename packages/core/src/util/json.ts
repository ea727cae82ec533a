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

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

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
 * `what` names the value in messages (for example `query`).
 */
export function assertJson(value: unknown, what: string, limits: JsonLimits, operation: string): asserts value is Json {
  let nodes = 0;
  const onPath = new Set<object>();
  const visit = (node: unknown, path: string, depth: number): void => {
    nodes++;
    if (nodes > limits.nodes) {
      throw new DocketError('PAYLOAD_TOO_LARGE', `${what} has more than ${limits.nodes} JSON nodes`, {
        operation,
        details: { path: what, limit: limits.nodes, kind: 'nodes' },
      });
    }
    if (depth > limits.depth) {
      throw new DocketError('PAYLOAD_TOO_LARGE', `${what} is nested deeper than ${limits.depth} levels`, {
        operation,
        details: { path, limit: limits.depth, kind: 'depth' },
      });
    }
    if (node === null || typeof node === 'string' || typeof node === 'boolean') return;
    if (typeof node === 'number') {
      if (!Number.isFinite(node)) invalid(path, node);
      return;
    }
    if (typeof node !== 'object') invalid(path, node);
    const obj = node as object;
    if (onPath.has(obj)) {
      throw new DocketError('JSON_INVALID', `${path} is not JSON: it contains a cycle`, {
        operation,
        details: { path },
      });
    }
    onPath.add(obj);
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        if (!(i in obj)) invalid(`${path}[${i}]`, undefined);
        visit(obj[i], `${path}[${i}]`, depth + 1);
      }
    } else {
      if (!isPlainObject(obj)) invalid(path, obj);
      if (Object.getOwnPropertySymbols(obj).length > 0) invalid(path, Symbol());
      for (const [key, child] of Object.entries(obj)) visit(child, `${path}.${key}`, depth + 1);
    }
    onPath.delete(obj);
  };
  const invalid = (path: string, node: unknown): never => {
    throw new DocketError('JSON_INVALID', `${path} is not JSON: ${describe(node)}`, { operation, details: { path } });
  };
  visit(value, what, 1);
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > limits.bytes) {
    throw new DocketError('PAYLOAD_TOO_LARGE', `${what} is ${bytes} bytes, more than the limit of ${limits.bytes}`, {
      operation,
      details: { path: what, limit: limits.bytes, bytes, kind: 'bytes' },
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
