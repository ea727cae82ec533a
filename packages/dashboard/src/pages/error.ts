import { isDocketError } from '@docket/core';
import { html } from 'hono/html';
import { type Fragment, layout, type PageContext } from '../html.js';

/** The HTTP status a refused request gets for a `DocketError` code: 400 for bad input, 503 when the store is down. */
export function statusOf(error: unknown): 400 | 404 | 409 | 500 | 503 {
  if (!isDocketError(error)) return 500;
  switch (error.code) {
    case 'CONFIG_INVALID':
    case 'CURSOR_INVALID':
    case 'JSON_INVALID':
    case 'COMMAND_CONFLICT':
    case 'PAYLOAD_TOO_LARGE':
      return 400;
    case 'REVISION_CONFLICT':
      return 409;
    case 'CONNECTION_UNAVAILABLE':
    case 'STORAGE_FAILURE':
    case 'QUEUE_FAILED':
    case 'QUEUE_CLOSED':
      return 503;
    default:
      return 500;
  }
}

/** A page saying what went wrong: the error's code and message, escaped like everything else. */
export function errorPage(page: PageContext, title: string, error: unknown): Fragment {
  const code = isDocketError(error) ? error.code : 'ERROR';
  const message = error instanceof Error ? error.message : String(error);
  return layout(
    page,
    title,
    html`<p class="notice error" id="error"><span class="code" id="error-code">${code}</span> ${message}</p>`,
  );
}
