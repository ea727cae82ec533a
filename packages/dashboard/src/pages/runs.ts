import { type Operator, RUN_STATUSES, type RunListItem, type RunStatus } from '@docket/core';
import { html } from 'hono/html';
import { type Fragment, layout, type Notice, type PageContext, statusBadge, when } from '../html.js';
import { bulkForm, FILTER_FIELDS, type RunsFilter, searchRuns } from './runs-search.js';

export type { RunsFilter } from './runs-search.js';

/**
 * Runs newest first: searched by run id or idempotency key, filtered by task, status, group, creation time, parent
 * and schedule, 50 to a page with a link to the next (older) page, with the total where the counters know it, and a form
 * that acts on the selected runs or on every run the filter matches.
 */
export async function runsPage(
  page: PageContext,
  operator: Operator,
  filter: RunsFilter,
  notice?: Notice,
): Promise<Fragment> {
  const [found, stats] = await Promise.all([searchRuns(operator, filter), operator.stats()]);
  const tasks = [...new Set(stats.byTask.map((t) => t.name))];
  const total = totalOf(filter, stats);
  const next = found.nextCursor
    ? html`<a id="older" href="${page.base}/runs?${new URLSearchParams({ ...keep(filter), cursor: found.nextCursor })}">Older runs →</a>`
    : html`<span class="muted">No older runs.</span>`;
  const count =
    total === null
      ? html`<p class="muted" id="total">${found.items.length} shown${found.nextCursor ? ' (more below)' : ''}</p>`
      : html`<p id="total"><strong data-total="${total}">${total}</strong> runs match</p>`;
  const table =
    found.items.length === 0
      ? html`<p class="muted" id="no-runs">No runs match.</p>`
      : bulkForm(page, filter, total, runsTable(page, found.items, !page.readOnly));
  const body = html`${filterForm(page, filter, tasks)}
${count}
${table}
<p class="paging">${filter.cursor ? html`<a href="${page.base}/runs?${new URLSearchParams(keep(filter))}">← Newest</a> · ` : ''}${next}</p>`;
  return layout(page, 'Runs', body, notice);
}

/** The filter as query parameters, without the cursor. */
export function keep(filter: RunsFilter): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of FILTER_FIELDS) {
    const value = filter[name];
    if (value) kept[name] = value;
  }
  return kept;
}

/** How many runs the filter matches, from the counters: known for a task and a status only, else `null`. */
function totalOf(filter: RunsFilter, stats: Awaited<ReturnType<Operator['stats']>>): number | null {
  if (filter.q || filter.group || filter.from || filter.to || filter.parent || filter.schedule) return null;
  const status = filter.status as RunStatus | undefined;
  const counts = filter.task
    ? stats.byTask.filter((t) => t.name === filter.task).map((t) => t.byStatus)
    : [stats.byStatus];
  let total = 0;
  for (const byStatus of counts) {
    total += status ? byStatus[status] : Object.values(byStatus).reduce((a, b) => a + b, 0);
  }
  return total;
}

function filterForm(page: PageContext, filter: RunsFilter, tasks: string[]): Fragment {
  const option = (value: string, label: string, chosen: string | undefined) =>
    html`<option value="${value}"${chosen === value ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="${page.base}/runs" class="filter" id="filter">
<label>Search <input type="search" name="q" value="${filter.q ?? ''}" placeholder="run id or idempotency key" id="search"></label>
<label>Task <select name="task">${option('', 'all tasks', filter.task ?? '')}${tasks.map((t) => option(t, t, filter.task))}</select></label>
<label>Status <select name="status">${option('', 'any status', filter.status ?? '')}${RUN_STATUSES.map((s) => option(s, s, filter.status))}</select></label>
<label>Group <input type="text" name="group" value="${filter.group ?? ''}" size="10"></label>
<label>Created from (UTC) <input type="datetime-local" name="from" value="${filter.from ?? ''}"></label>
<label>to <input type="datetime-local" name="to" value="${filter.to ?? ''}"></label>
${filter.parent ? html`<input type="hidden" name="parent" value="${filter.parent}"><span class="muted" id="parent-filter">children of <a class="mono" href="${page.base}/runs/${filter.parent}">${filter.parent}</a></span>` : ''}
${filter.schedule ? html`<input type="hidden" name="schedule" value="${filter.schedule}"><span class="muted" id="schedule-filter">made by schedule <a class="mono" href="${page.base}/schedules">${filter.schedule}</a></span>` : ''}
<button type="submit">Filter</button>
</form>`;
}

/** What a run's row says beside its status: its error for a failed run, what it waits for while waiting. */
function detailOf(run: RunListItem): Fragment | string {
  if (run.error !== null && (run.status === 'failed' || run.status === 'retrying' || run.status === 'blocked')) {
    return html`<span class="error-code">${run.error.code}</span>: <span class="error-message">${run.error.message}</span>`;
  }
  if (run.status !== 'waiting') return '';
  if (run.children.total > run.children.settled) {
    return html`children ${run.children.settled}/${run.children.total} settled`;
  }
  const trigger = run.trigger;
  if (trigger !== null && 'event' in trigger) return html`event <span class="mono">${trigger.event}</span>`;
  return html`time ${when(run.dueAt)}`;
}

/** A table of runs, each linked to its page; with `selectable`, a box per row for the bulk form. */
export function runsTable(page: PageContext, items: RunListItem[], selectable = false): Fragment {
  const rows = items.map(
    (run) => html`<tr data-run-id="${run.runId}" data-status="${run.status}">
${selectable ? html`<td><input type="checkbox" name="run" value="${run.runId}:${run.revision}" aria-label="select run ${run.runId}"></td>` : ''}
<td><a class="mono" href="${page.base}/runs/${run.runId}">${run.runId}</a></td>
<td>${run.task.name} <span class="muted">v${run.task.version}</span></td>
<td>${statusBadge(run.status)}</td><td>${run.reason}</td><td class="detail">${detailOf(run)}</td>
<td class="num">${run.page}</td><td class="num">${run.attempt}</td>
<td>${when(run.createdAt)}</td><td>${when(run.updatedAt)}</td></tr>`,
  );
  return html`<table class="runs" id="runs">
<thead><tr>${selectable ? html`<th><span class="sr-only">Select</span></th>` : ''}<th>Run</th><th>Task</th><th>Status</th><th>Reason</th><th>Error or wait</th><th>Page</th><th>Attempt</th><th>Created</th><th>Updated</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}
