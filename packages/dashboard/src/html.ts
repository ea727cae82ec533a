import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

/** A fragment of HTML: every value interpolated into it was escaped. */
export type Fragment = HtmlEscapedString | Promise<HtmlEscapedString>;

/** What every page needs: where the dashboard is mounted, the CSRF field for its forms, whether actions are shown. */
export interface PageContext {
  base: string;
  csrf: string;
  readOnly: boolean;
  /** The changes-feed cursor the page is rendered at, for the live refresh (`''`: no live refresh). */
  feed: string;
}

const NAV = [
  ['', 'Overview'],
  ['/runs', 'Runs'],
  ['/dead-letters', 'Dead letters'],
  ['/schedules', 'Schedules'],
] as const;

/** The whole document: head with the stylesheet, navigation, an optional notice, and the page's body. */
export function layout(page: PageContext, title: string, body: Fragment, notice?: Notice): Fragment {
  return html`<!doctype html>
<html lang="en" data-base="${page.base}" data-feed="${page.feed}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Docket</title>
<link rel="stylesheet" href="${page.base}/assets/style.css">
<link rel="icon" href="${page.base}/assets/favicon.svg" type="image/svg+xml">
<script src="${page.base}/assets/live.js" defer></script>
</head>
<body>
<header>
<strong class="brand">Docket</strong>
<nav>${NAV.map(([path, label]) => html`<a href="${page.base}${path || '/'}">${label}</a>`)}</nav>
${page.readOnly ? html`<span class="badge" id="read-only">read-only</span>` : ''}
${page.feed === '' ? '' : html`<button type="button" id="live-toggle" class="live" aria-pressed="true" title="refresh this page as runs change">Live: on</button>`}
</header>
<main>
${notice ? html`<p class="notice ${notice.tone}" role="status" id="notice">${notice.text}</p>` : ''}
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

/** A banner above the page: `ok` after an action, `warn` for a conflict, `error` for a refusal. */
export interface Notice {
  tone: 'ok' | 'warn' | 'error';
  text: string;
}

/** A JSON value, formatted, as escaped text in a `<pre>`. */
export function jsonBlock(value: unknown, id?: string): Fragment {
  return html`<pre class="json"${id ? html` id="${id}"` : ''}>${JSON.stringify(value, null, 2) ?? 'null'}</pre>`;
}

/** A run status as a coloured badge. */
export function statusBadge(status: string): Fragment {
  return html`<span class="status status-${status}">${status}</span>`;
}

/** An ISO time shown as its UTC date and time to the second, or a dash. */
export function when(iso: string | null | undefined): Fragment {
  if (!iso) return html`<span class="muted">–</span>`;
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')}</time>`;
}

/** The hidden fields every action form carries, and its reason box. */
export function formFields(page: PageContext, expectedRevision: number): Fragment {
  return html`<input type="hidden" name="csrf" value="${page.csrf}">
<input type="hidden" name="expectedRevision" value="${expectedRevision}">
<input type="hidden" name="commandId" value="${crypto.randomUUID()}">`;
}

/** One action form: a reason box and a button, posting to `action`. */
export function actionForm(page: PageContext, action: string, verb: string, revision: number): Fragment {
  return html`<form method="post" action="${action}" class="action" data-verb="${verb}">
${formFields(page, revision)}
<input type="text" name="reason" required maxlength="500" placeholder="reason" aria-label="reason for ${verb}">
<button type="submit">${verb}</button>
</form>`;
}
