import * as v from 'valibot';

/** The rule names, task names, versions and namespaces follow. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A valibot schema for a name: the pattern and at most 128 bytes. */
export const nameSchema = v.pipe(v.string(), v.regex(NAME_PATTERN), v.maxBytes(128));

/** Formats valibot issues as `path: message` lines for `details.issues`. */
export function formatIssues(issues: readonly v.BaseIssue<unknown>[]): { path: string; message: string }[] {
  return issues.map((issue) => ({
    path: issue.path?.map((item) => String(item.key)).join('.') || '(root)',
    message: issue.message,
  }));
}
