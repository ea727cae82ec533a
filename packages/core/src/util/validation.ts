import * as v from 'valibot';

/** The rule names, task names, versions and namespaces follow. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A valibot schema for a name: the pattern and at most 128 bytes. */
export const nameSchema = v.pipe(v.string(), v.regex(NAME_PATTERN), v.maxBytes(128));

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

/** True for a string that is well-formed Unicode (no lone surrogate) and holds no NUL character. */
export function isCleanText(text: string): boolean {
  return !LONE_SURROGATE.test(text) && !text.includes('\u0000');
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The check every key, id, reason and name given to Docket passes: well-formed Unicode without NUL. */
export const cleanText = v.check<string, string>(isCleanText, 'must be well-formed Unicode without NUL characters');

/** Formats valibot issues as `path: message` lines for `details.issues`. */
export function formatIssues(issues: readonly v.BaseIssue<unknown>[]): { path: string; message: string }[] {
  return issues.map((issue) => ({
    path: issue.path?.map((item) => String(item.key)).join('.') || '(root)',
    message: issue.message,
  }));
}
