import { ERROR_CODES, isDocketError } from '@docket/core';
import fc from 'fast-check';

// The generated inputs the fuzz suites share: values of the wrong type, text out of bounds, keys that are no option.

/** Expects `call` to be refused with a documented `DocketError` code. */
export async function refused(call: () => unknown): Promise<void> {
  let error: unknown = null;
  try {
    await call();
  } catch (caught) {
    error = caught;
  }
  if (!isDocketError(error)) throw new Error(`accepted, or refused without a DocketError: ${String(error)}`);
  if (!(error.code in ERROR_CODES)) throw new Error(`undocumented code ${error.code}`);
}

// Values no option of Docket takes where a specific type is asked for.
export const notAString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
);
export const notAnInteger = fc.oneof(
  fc.double({ noInteger: true }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -1, 2 ** 53),
  fc.string(),
  fc.constant(null),
);
// Strings no key, id, name, reason or command id takes: empty, NUL, lone surrogates, or far too long.
export const badText = fc.oneof(
  fc.constant(''),
  fc.string().map((s) => `${s}\u0000`),
  fc.string().map((s) => `${s}\ud800`),
  fc.string().map((s) => `\udfff${s}`),
  fc.constant('x'.repeat(5000)),
);
// Keys that are never options, named like Object.prototype members among them.
export const unknownKey = fc.oneof(
  fc.constantFrom('constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__x', 'isPrototypeOf'),
  fc.string({ minLength: 1, maxLength: 12 }).map((s) => `zz_${s}`),
);
// Values that are not JSON.
export const notJson = fc.oneof(
  fc.constant(() => 1),
  fc.constant(Symbol('s')),
  fc.bigInt(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY),
  fc.constant(new Date(0)),
  fc.constant(new Map()),
);
/** One field of `base` replaced by `value`, or an unknown key added. */
export const mutated = (base: Record<string, unknown>, fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.oneof(
    ...Object.entries(fields).map(([key, bad]) => bad.map((value) => ({ ...base, [key]: value }))),
    fc.tuple(unknownKey, fc.anything()).map(([key, value]) => ({ ...base, [key]: value })),
  );

/** Text every key, id, name and reason takes: 1 to 40 characters, no NUL, no lone surrogate. */
export const cleanText = fc
  .string({ minLength: 1, maxLength: 40 })
  .filter((s) => !s.includes('\u0000') && !/[\uD800-\uDFFF]/.test(s) && s.trim() === s && s !== '');
