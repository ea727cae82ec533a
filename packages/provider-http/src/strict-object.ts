import * as v from 'valibot';

/**
 * `v.strictObject` whose unknown-key check also refuses keys named like `Object.prototype` members (`constructor`,
 * `toString`, `__proto__`, ...): valibot looks keys up with `in`, which finds those on any plain object. Arrays are
 * refused too.
 */
export function strictObject<const E extends v.ObjectEntries>(entries: E) {
  const schema = v.strictObject(Object.assign(Object.create(null), entries) as E);
  // An array is an object to valibot: `[]` would pass as an empty options object.
  const notArray = v.custom<v.InferInput<typeof schema>>(
    (input) => !Array.isArray(input),
    'must be an object, not an array',
  );
  return v.pipe(notArray, schema);
}
