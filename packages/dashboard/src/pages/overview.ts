import {
  type FlowLimits,
  type Operator,
  RUN_STATUSES,
  type SettledPerMinute,
  type Stats,
  type TaskFlow,
  type TaskInfo,
} from '@docket/core';
import { html } from 'hono/html';
import { actionForm, type Fragment, layout, type Notice, type PageContext, when } from '../html.js';

/**
 * The overview: counts by task and status, the tasks with their flow limits and a pause or resume form each, runs
 * settled per minute over the last hour, dead letters, schedules. `notice` is the banner an action left.
 */
export async function overviewPage(page: PageContext, operator: Operator, notice?: Notice): Promise<Fragment> {
  const [stats, settled, schedules, health, tasks] = await Promise.all([
    operator.stats(),
    operator.settled({ minutes: 60 }),
    operator.schedules.list({ limit: 200 }),
    operator.health(),
    operator.tasks.list(),
  ]);
  const body = html`<p class="muted">Read at ${when(stats.at)} · health
<span class="health health-${health.status}" id="health">${health.status}</span>
${health.reasons.length > 0 ? html`<span class="muted">(${health.reasons.join('; ')})</span>` : ''}</p>
<section><h2>Runs by task and status</h2>${countsTable(page, stats)}</section>
<section><h2>Tasks</h2>${tasksTable(page, tasks)}</section>
<section><h2>Settled per minute, last hour</h2>${settledChart(settled)}</section>
<section class="tiles">
<a class="tile" href="${page.base}/dead-letters"><span class="big" id="dead-letters">${stats.deadLetters}</span> dead letters</a>
<a class="tile" href="${page.base}/schedules"><span class="big" id="schedules">${schedules.items.length}${schedules.nextCursor ? '+' : ''}</span> schedules</a>
<span class="tile"><span class="big" id="oldest-due">${ageText(stats.oldestDueAgeMs)}</span> oldest due run waiting</span>
</section>`;
  return layout(page, 'Overview', body, notice);
}

/** Each task: its versions, whether it is paused, its flow limits, and a pause or resume form (not when read-only). */
function tasksTable(page: PageContext, tasks: TaskInfo[]): Fragment {
  if (tasks.length === 0) return html`<p class="muted">No task registered yet.</p>`;
  const rows = tasks.map((t) => {
    const verb = t.paused ? 'resume' : 'pause';
    const action = page.readOnly
      ? ''
      : html`<td>${actionForm(page, `${page.base}/tasks/${encodeURIComponent(t.name)}/${verb}`, verb, t.revision)}</td>`;
    return html`<tr data-task-name="${t.name}"><th scope="row"><a href="${page.base}/tasks/${encodeURIComponent(t.name)}">${t.name}</a></th><td>${t.versions.join(', ')}</td>
<td data-paused="${t.paused ? 'true' : 'false'}">${t.paused ? html`<strong>paused</strong>` : 'active'}</td><td>${flowText(t.flow)}</td>${action}</tr>`;
  });
  return html`<table id="tasks"><thead><tr><th>Task</th><th>Versions</th><th>State</th><th>Flow limits</th>${page.readOnly ? '' : html`<th>Action</th>`}</tr></thead>
<tbody>${rows}</tbody></table>`;
}

/** A task's flow limits in words, or a dash. */
export function flowText(flow: TaskFlow | null): string {
  if (flow === null) return '–';
  const limits = (l: FlowLimits, prefix: string) => [
    ...(l.concurrency === undefined ? [] : [`${prefix}at most ${l.concurrency} at once`]),
    ...(l.rate === undefined ? [] : [`${prefix}${l.rate.max} per ${l.rate.perMs} ms`]),
  ];
  const parts = [...limits(flow, ''), ...(flow.group === undefined ? [] : limits(flow.group, 'each group: '))];
  return parts.length === 0 ? '–' : parts.join('; ');
}

/** A table of task rows by status columns, with a total row; each number links to the runs it counts. */
function countsTable(page: PageContext, stats: Stats): Fragment {
  const cell = (task: string | null, status: string, n: number) => {
    const query = new URLSearchParams({ ...(task ? { task } : {}), status }).toString();
    const content = n === 0 ? html`<span class="muted">0</span>` : html`<a href="${page.base}/runs?${query}">${n}</a>`;
    return html`<td class="num" data-task="${task ?? '*'}" data-status="${status}">${content}</td>`;
  };
  const rows = stats.byTask.map(
    (t) =>
      html`<tr><th scope="row">${t.name} <span class="muted">v${t.version}</span></th>${RUN_STATUSES.map((s) =>
        cell(t.name, s, t.byStatus[s]),
      )}</tr>`,
  );
  return html`<table class="counts" id="counts">
<thead><tr><th>Task</th>${RUN_STATUSES.map((s) => html`<th>${s}</th>`)}</tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><th scope="row">all tasks</th>${RUN_STATUSES.map((s) => cell(null, s, stats.byStatus[s]))}</tr></tfoot>
</table>`;
}

/** An inline SVG bar chart of one count per minute; each bar has its minute and count as a tooltip. */
export function settledChart(settled: SettledPerMinute): Fragment {
  const width = 720;
  const height = 140;
  const slot = width / settled.minutes.length;
  const max = Math.max(1, ...settled.minutes.map((m) => m.count));
  const total = settled.minutes.reduce((sum, m) => sum + m.count, 0);
  const bars = settled.minutes.map((m, i) => {
    const h = m.count === 0 ? 0 : Math.max(1, Math.round((m.count / max) * (height - 18)));
    return html`<rect x="${(i * slot + 1).toFixed(1)}" y="${height - h}" width="${(slot - 2).toFixed(1)}" height="${h}" data-minute="${m.start}" data-count="${m.count}"><title>${m.start.slice(11, 16)} UTC: ${m.count}</title></rect>`;
  });
  return html`<figure class="chart">
<svg id="settled-chart" viewBox="0 0 ${width} ${height}" width="100%" height="${height}" preserveAspectRatio="none" role="img" aria-label="runs settled per minute">
<line x1="0" y1="${height - 0.5}" x2="${width}" y2="${height - 0.5}" class="guide"></line>
${bars}
</svg>
<figcaption>Highest bar: ${max} a minute · <span id="settled-total">${total}</span> runs settled from ${settled.minutes[0]?.start.slice(11, 16)} to
${settled.minutes.at(-1)?.start.slice(11, 16)} UTC</figcaption>
</figure>`;
}

function ageText(ms: number | null): string {
  if (ms === null) return '–';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}
