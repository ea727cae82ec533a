import { type HistoryEntry, isTerminal, type RunInfo, type RunListItem, type RunStatus } from '@docket/core';
import { html } from 'hono/html';
import {
  actionForm,
  type Fragment,
  jsonBlock,
  layout,
  type Notice,
  type PageContext,
  statusBadge,
  when,
} from '../html.js';
import { runsTable } from './runs.js';

/** The newest children of a run, as `operator.runs.list({ parentRunId })` answers them. */
export interface ChildListing {
  items: RunListItem[];
  nextCursor: string | null;
}

/**
 * One run: every `RunInfo` field (its parent linked), query and state as JSON, its children's statuses at a glance
 * with the newest of them linked, its history as a timeline, and the actions it allows.
 */
export function runPage(
  page: PageContext,
  run: RunInfo,
  history: HistoryEntry[],
  notice?: Notice,
  children: ChildListing | null = null,
): Fragment {
  const body = html`<section class="fields">${fieldList(page, run)}</section>
${children === null ? '' : childrenSection(page, run, children)}
<section class="actions" id="actions">${page.readOnly ? '' : actions(page, run)}</section>
<section><h2>Query</h2>${jsonBlock(run.query, 'query')}</section>
<section><h2>State</h2>${jsonBlock(run.state, 'state')}</section>
${run.error ? html`<section><h2>Error</h2>${jsonBlock(run.error, 'error')}</section>` : ''}
<section><h2>History</h2>${timeline(history)}</section>`;
  return layout(page, `Run ${run.runId}`, body, notice);
}

function fieldList(page: PageContext, run: RunInfo): Fragment {
  const c = run.callbacks;
  const parent =
    run.parentRunId === null
      ? '–'
      : html`<a class="mono" id="parent" href="${page.base}/runs/${run.parentRunId}">${run.parentRunId}</a>`;
  const rows: [string, unknown][] = [
    ['task', `${run.task.name} v${run.task.version}`],
    ['status', statusBadge(run.status)],
    ['reason', run.reason],
    ['revision', run.revision],
    ['page', run.page],
    ['batch', run.batchId],
    ['attempt', run.attempt],
    ['business failures', run.businessFailures],
    ['scheduled retries', run.scheduledRetries],
    ['recoveries', run.recoveries],
    ['priority', run.priority],
    ['due', when(run.dueAt)],
    ['trigger', run.trigger === null ? '–' : JSON.stringify(run.trigger)],
    ['deadline', when(run.limits.deadlineAt)],
    ['model calls', `${run.limits.modelCalls.used} of ${run.limits.modelCalls.limit ?? 'unlimited'}`],
    ['callbacks', `${c.pending} pending, ${c.delivered} delivered, ${c.deadLetters} dead letters`],
    ['parent', parent],
    ['children', run.children.total === 0 ? '–' : `${run.children.settled} of ${run.children.total} settled`],
    ['created', when(run.createdAt)],
    ['updated', when(run.updatedAt)],
  ];
  return html`<dl id="fields">${rows.map(([k, v]) => html`<dt>${k}</dt><dd data-field="${k}">${v}</dd>`)}</dl>`;
}

/** The children of a parent: how many of the listed ones are in each status, then their table and a link to all. */
function childrenSection(page: PageContext, run: RunInfo, children: ChildListing): Fragment {
  const counts = new Map<RunStatus, number>();
  for (const child of children.items) counts.set(child.status, (counts.get(child.status) ?? 0) + 1);
  const glance = [...counts].map(
    ([status, n]) => html`<span class="child-count" data-status="${status}">${statusBadge(status)} ${n}</span> `,
  );
  const scope = children.nextCursor === null ? 'all' : `the newest ${children.items.length}`;
  return html`<section id="children"><h2>Children</h2>
<p id="children-glance">${glance}<span class="muted">(${scope} of ${run.children.total})</span>
<a id="all-children" href="${page.base}/runs?${new URLSearchParams({ parent: run.runId })}">All children →</a></p>
${runsTable(page, children.items)}</section>`;
}

/** The forms this run's status allows, each carrying the revision shown and a fresh command id. */
function actions(page: PageContext, run: RunInfo): Fragment {
  const at = `${page.base}/runs/${run.runId}`;
  const forms: Fragment[] = [];
  const paused = run.status === 'paused' || run.status === 'pausing';
  if (!isTerminal(run.status) && !paused) forms.push(actionForm(page, `${at}/pause`, 'pause', run.revision));
  if (paused || run.status === 'blocked') forms.push(actionForm(page, `${at}/resume`, 'resume', run.revision));
  if (!isTerminal(run.status)) forms.push(actionForm(page, `${at}/cancel`, 'cancel', run.revision));
  if (run.status === 'failed') forms.push(actionForm(page, `${at}/retry`, 'retry', run.revision));
  return forms.length > 0 ? html`${forms}` : html`<p class="muted">No action applies to a ${run.status} run.</p>`;
}

function timeline(history: HistoryEntry[]): Fragment {
  const items = history.map(
    (e) => html`<li data-seq="${e.seq}" data-reason="${e.reason}">
<div class="when">${when(e.at)} <span class="muted">#${e.seq}</span></div>
<div>${e.from ?? 'new'} → ${statusBadge(e.to)} <strong class="reason">${e.reason}</strong> by <span class="actor">${e.actor}</span></div>
${e.detail === undefined ? '' : jsonBlock(e.detail)}
</li>`,
  );
  return html`<ol class="timeline" id="history">${items}</ol>`;
}
