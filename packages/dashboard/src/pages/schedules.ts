import type { Operator, ScheduleInfo } from '@docket/core';
import { html } from 'hono/html';
import { actionForm, type Fragment, layout, type Notice, type PageContext, when } from '../html.js';

/** Persisted schedules with their next slot, and a pause or resume form each; 50 to a page. */
export async function schedulesPage(
  page: PageContext,
  operator: Operator,
  cursor: string | undefined,
  notice?: Notice,
): Promise<Fragment> {
  const listing = await operator.schedules.list({ limit: 50, ...(cursor ? { cursor } : {}) });
  const body = html`${
    listing.items.length === 0
      ? html`<p class="muted" id="no-schedules">No schedules.</p>`
      : html`<table id="schedules"><thead><tr><th>Schedule</th><th>Task</th><th>Cron</th><th>Misfire</th><th>Enabled</th><th>Next</th><th>Last slot</th>${page.readOnly ? '' : html`<th>Action</th>`}</tr></thead><tbody>${listing.items.map((s) => row(page, s))}</tbody></table>`
  }
<p class="paging">${listing.nextCursor ? html`<a id="older" href="${page.base}/schedules?${new URLSearchParams({ cursor: listing.nextCursor })}">More →</a>` : ''}</p>`;
  return layout(page, 'Schedules', body, notice);
}

function row(page: PageContext, s: ScheduleInfo): Fragment {
  const verb = s.enabled ? 'pause' : 'resume';
  const action = page.readOnly
    ? ''
    : html`<td>${actionForm(page, `${page.base}/schedules/${encodeURIComponent(s.id)}/${verb}`, verb, s.revision)}</td>`;
  return html`<tr data-schedule-id="${s.id}">
<td class="mono">${s.id}</td><td>${s.task.name} <span class="muted">v${s.task.version}</span></td>
<td class="mono">${s.cron} <span class="muted">${s.timezone}</span></td><td>${s.misfire}</td>
<td>${s.enabled ? 'yes' : html`<strong>paused</strong>`}</td><td>${when(s.nextAt)}</td><td>${when(s.lastSlotAt)}</td>${action}</tr>`;
}
