import { type Operator, RUN_STATUSES, type SettledPerMinute, type Stats } from '@docket/core';
import { html } from 'hono/html';
import { type Fragment, layout, type PageContext, when } from '../html.js';

/** The overview: counts by task and status, runs settled per minute over the last hour, dead letters, schedules. */
export async function overviewPage(page: PageContext, operator: Operator): Promise<Fragment> {
  const [stats, settled, schedules, health] = await Promise.all([
    operator.stats(),
    operator.settled({ minutes: 60 }),
    operator.schedules.list({ limit: 200 }),
    operator.health(),
  ]);
  const body = html`<p class="muted">Read at ${when(stats.at)} · health
<span class="health health-${health.status}" id="health">${health.status}</span>
${health.reasons.length > 0 ? html`<span class="muted">(${health.reasons.join('; ')})</span>` : ''}</p>
<section><h2>Runs by task and status</h2>${countsTable(page, stats)}</section>
<section><h2>Settled per minute, last hour</h2>${settledChart(settled)}</section>
<section class="tiles">
<a class="tile" href="${page.base}/dead-letters"><span class="big" id="dead-letters">${stats.deadLetters}</span> dead letters</a>
<a class="tile" href="${page.base}/schedules"><span class="big" id="schedules">${schedules.items.length}${schedules.nextCursor ? '+' : ''}</span> schedules</a>
<span class="tile"><span class="big" id="oldest-due">${ageText(stats.oldestDueAgeMs)}</span> oldest due run waiting</span>
</section>`;
  return layout(page, 'Overview', body);
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
