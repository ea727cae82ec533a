import type { Notice } from './html.js';

const VERBS = new Set(['pause', 'resume', 'cancel', 'retry', 'replay']);
/** What a verb's banner says when its name is not the words to show. */
const SAID = new Map([['run-now', 'run now: this run was started']]);

/** The `?notice=verb:kind` a redirect after an action carries, as the banner it shows (anything else: none). */
export function noticeOf(param: string | undefined): Notice | undefined {
  if (param === undefined) return undefined;
  const [verb, kind] = param.split(':');
  const said = verb === undefined ? undefined : SAID.get(verb);
  if (said !== undefined && kind === 'applied') return { tone: 'ok', text: `${said}.` };
  if (verb === undefined || !VERBS.has(verb)) return undefined;
  if (kind === 'applied') return { tone: 'ok', text: `${verb}: applied.` };
  if (kind === 'noop') return { tone: 'ok', text: `${verb}: nothing to change, nothing was written.` };
  return undefined;
}

/** The banner of a stale form: what changed, and that nothing was applied. */
export function staleNotice(what: string, shown: unknown, current?: number): Notice {
  const revisions = current === undefined ? '' : ` (revision ${String(shown)} then, ${current} now)`;
  return {
    tone: 'warn',
    text: `${what} changed since you looked${revisions}: nothing was applied. This is how it is now.`,
  };
}
