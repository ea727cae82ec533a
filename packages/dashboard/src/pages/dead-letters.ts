import type { DeadLetter, Operator } from '@docket/core';
import { html } from 'hono/html';
import { actionForm, type Fragment, layout, type Notice, type PageContext, when } from '../html.js';

/** Dead letters newest first, each with its error and a replay form; 50 to a page. */
export async function deadLettersPage(
  page: PageContext,
  operator: Operator,
  cursor: string | undefined,
  notice?: Notice,
): Promise<Fragment> {
  const listing = await operator.deadLetters.list({ limit: 50, ...(cursor ? { cursor } : {}) });
  const rows = listing.items.map((d) => row(page, d));
  const body = html`${
    listing.items.length === 0
      ? html`<p class="muted" id="no-dead-letters">No dead letters.</p>`
      : html`<table id="dead-letters"><thead><tr><th>Event</th><th>Run</th><th>Kind</th><th>Attempts</th><th>Error</th><th>Dead at</th>${page.readOnly ? '' : html`<th>Replay</th>`}</tr></thead><tbody>${rows}</tbody></table>`
  }
<p class="paging">${listing.nextCursor ? html`<a id="older" href="${page.base}/dead-letters?${new URLSearchParams({ cursor: listing.nextCursor })}">Older →</a>` : ''}</p>`;
  return layout(page, 'Dead letters', body, notice);
}

function row(page: PageContext, d: DeadLetter): Fragment {
  const replay = page.readOnly
    ? ''
    : html`<td>${actionForm(page, `${page.base}/dead-letters/${encodeURIComponent(d.eventId)}/replay`, 'replay', d.revision)}</td>`;
  return html`<tr data-event-id="${d.eventId}">
<td class="mono">${d.eventId}</td>
<td><a class="mono" href="${page.base}/runs/${d.runId}">${d.runId}</a></td>
<td>${d.kind}</td><td class="num">${d.deliveryAttempt}</td>
<td>${d.error ? html`<span class="code">${d.error.code}</span> ${d.error.message}` : '–'}</td>
<td>${when(d.deadAt)}</td>${replay}</tr>`;
}
