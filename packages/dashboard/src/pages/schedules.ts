import type { Operator, ScheduleInfo } from '@docket/core';
import { html } from 'hono/html';
import { actionForm, type Fragment, layout, type Notice, type PageContext, when } from '../html.js';

/** Persisted schedules with their next slot, their runs, and pause, resume and run-now forms; 50 to a page. */
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
      : html`<table id="schedules">${schedulesHead(page)}<tbody>${listing.items.map((s) => scheduleRow(page, s))}</tbody></table>`
  }
<p class="paging">${listing.nextCursor ? html`<a id="older" href="${page.base}/schedules?${new URLSearchParams({ cursor: listing.nextCursor })}">More →</a>` : ''}</p>`;
  return layout(page, 'Schedules', body, notice);
}

/** The head of a schedules table. */
export function schedulesHead(page: PageContext): Fragment {
  return html`<thead><tr><th>Schedule</th><th>Task</th><th>Cron</th><th>Misfire</th><th>Enabled</th><th>Next</th><th>Last slot</th><th>Runs</th>${page.readOnly ? '' : html`<th>Action</th>`}</tr></thead>`;
}

/** A minute of slack before a schedule's next slot counts as overdue (a consumer fires it on its own poll). */
const OVERDUE_AFTER_MS = 60_000;

/**
 * One schedule's row: a link to the runs it made, a pause or resume form and a "run now" form. A next slot more than a minute past says plainly that no
 * consumer is firing it: schedules fire in consumer queues only.
 */
export function scheduleRow(page: PageContext, s: ScheduleInfo): Fragment {
  const overdue = s.enabled && s.nextAt !== null && Date.parse(s.nextAt) < Date.now() - OVERDUE_AFTER_MS;
  const next = overdue
    ? html`${when(s.nextAt)} <span class="overdue" data-overdue="true">past: no consumer is running to fire it</span>`
    : when(s.nextAt);
  const verb = s.enabled ? 'pause' : 'resume';
  const at = `${page.base}/schedules/${encodeURIComponent(s.id)}`;
  const action = page.readOnly
    ? ''
    : html`<td>${actionForm(page, `${at}/${verb}`, verb, s.revision)}${actionForm(page, `${at}/run-now`, 'run now', s.revision)}</td>`;
  const runs = `${page.base}/runs?${new URLSearchParams({ task: s.task.name, schedule: s.id })}`;
  return html`<tr data-schedule-id="${s.id}">
<td class="mono">${s.id}</td><td><a href="${page.base}/tasks/${encodeURIComponent(s.task.name)}">${s.task.name}</a> <span class="muted">v${s.task.version}</span></td>
<td class="mono">${s.cron} <span class="muted">${s.timezone}</span></td><td>${s.misfire}</td>
<td>${s.enabled ? 'yes' : html`<strong>paused</strong>`}</td><td>${next}</td><td>${when(s.lastSlotAt)}</td>
<td><a class="schedule-runs" href="${runs}">runs</a></td>${action}</tr>`;
}
