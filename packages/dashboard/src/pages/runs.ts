import { type Operator, RUN_STATUSES, type RunListItem, type RunStatus } from '@docket/core';
import { html } from 'hono/html';
import { type Fragment, layout, type PageContext, statusBadge, when } from '../html.js';

/** The filter of the runs page, as the query string gives it. */
export interface RunsFilter {
  task?: string;
  status?: string;
  /** Only the children of this run. */
  parent?: string;
  cursor?: string;
}

/** Runs newest first, filtered by task, status and parent, 50 to a page with a link to the next (older) page. */
export async function runsPage(page: PageContext, operator: Operator, filter: RunsFilter): Promise<Fragment> {
  const [listing, stats] = await Promise.all([
    operator.runs.list({
      ...(filter.task ? { taskName: filter.task } : {}),
      ...(filter.status ? { status: filter.status as RunStatus } : {}),
      ...(filter.parent ? { parentRunId: filter.parent } : {}),
      ...(filter.cursor ? { cursor: filter.cursor } : {}),
      limit: 50,
    }),
    operator.stats(),
  ]);
  const tasks = [...new Set(stats.byTask.map((t) => t.name))];
  const next = listing.nextCursor
    ? html`<a id="older" href="${page.base}/runs?${new URLSearchParams({ ...keep(filter), cursor: listing.nextCursor })}">Older runs →</a>`
    : html`<span class="muted">No older runs.</span>`;
  const body = html`${filterForm(page, filter, tasks)}
${listing.items.length === 0 ? html`<p class="muted" id="no-runs">No runs match.</p>` : runsTable(page, listing.items)}
<p class="paging">${filter.cursor ? html`<a href="${page.base}/runs?${new URLSearchParams(keep(filter))}">← Newest</a> · ` : ''}${next}</p>`;
  return layout(page, 'Runs', body);
}

function keep(filter: RunsFilter): Record<string, string> {
  return {
    ...(filter.task ? { task: filter.task } : {}),
    ...(filter.status ? { status: filter.status } : {}),
    ...(filter.parent ? { parent: filter.parent } : {}),
  };
}

function filterForm(page: PageContext, filter: RunsFilter, tasks: string[]): Fragment {
  const option = (value: string, label: string, chosen: string | undefined) =>
    html`<option value="${value}"${chosen === value ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="${page.base}/runs" class="filter" id="filter">
<label>Task <select name="task">${option('', 'all tasks', filter.task ?? '')}${tasks.map((t) => option(t, t, filter.task))}</select></label>
<label>Status <select name="status">${option('', 'any status', filter.status ?? '')}${RUN_STATUSES.map((s) => option(s, s, filter.status))}</select></label>
${filter.parent ? html`<input type="hidden" name="parent" value="${filter.parent}"><span class="muted" id="parent-filter">children of <a class="mono" href="${page.base}/runs/${filter.parent}">${filter.parent}</a></span>` : ''}
<button type="submit">Filter</button>
</form>`;
}

/** A table of runs, each linked to its page. */
export function runsTable(page: PageContext, items: RunListItem[]): Fragment {
  const rows = items.map(
    (run) => html`<tr data-run-id="${run.runId}">
<td><a class="mono" href="${page.base}/runs/${run.runId}">${run.runId}</a></td>
<td>${run.task.name} <span class="muted">v${run.task.version}</span></td>
<td>${statusBadge(run.status)}</td><td>${run.reason}</td>
<td class="num">${run.page}</td><td class="num">${run.attempt}</td>
<td>${when(run.createdAt)}</td><td>${when(run.updatedAt)}</td></tr>`,
  );
  return html`<table class="runs" id="runs">
<thead><tr><th>Run</th><th>Task</th><th>Status</th><th>Reason</th><th>Page</th><th>Attempt</th><th>Created</th><th>Updated</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}
