/**
 * Reading a thrown value without running its code: any value can be thrown, and its getters, `toString`,
 * `Symbol.toPrimitive` or Proxy traps may throw or lie. These helpers never call a value's own formatting hooks and
 * turn every throw while reading into "nothing there".
 */

/** `value[key]` when it can be read, else `undefined` (a getter or a Proxy trap that throws reads as nothing). */
export function safeProp(value: unknown, key: string): unknown {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** `value instanceof type`, false where the check itself throws (a Proxy's `getPrototypeOf` trap). */
export function safeInstanceOf(value: unknown, type: abstract new (...args: never[]) => unknown): boolean {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/** A string read from `value[key]`, or `fallback` when it is missing, not a string, or cannot be read. */
export function safeString(value: unknown, key: string, fallback: string): string {
  const read = safeProp(value, key);
  return typeof read === 'string' ? read : fallback;
}

/**
 * Text for a thrown value that is not an `Error`, made without calling anything of the value: primitives as
 * `String` shows them, objects and functions by kind only.
 */
export function describeThrown(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return String(value);
    case 'symbol':
      return value.description === undefined ? 'Symbol()' : `Symbol(${value.description})`;
    case 'function':
      return 'a function was thrown';
    default:
      return value === null ? 'null' : 'a non-Error object was thrown';
  }
}

/** The message of a thrown value: an `Error`'s own `message` when it is a readable string, else `describeThrown`. */
export function thrownMessage(value: unknown): string {
  if (safeInstanceOf(value, Error)) return safeString(value, 'message', '');
  return describeThrown(value);
}
