import { type Operator, RUN_STATUSES, type ScheduleInfo, type TaskInfo } from '@docket/core';
import { html } from 'hono/html';
import { actionForm, type Fragment, layout, type Notice, type PageContext } from '../html.js';
import { flowText } from './overview.js';
import { runsTable } from './runs.js';
import { scheduleRow, schedulesHead } from './schedules.js';

/** How many schedules the task page reads to find the task's own (schedules are listed by id, not by task). */
const SCHEDULES_READ = 1_000;

/**
 * One task: its versions, whether it is paused (with the form that changes it), its flow limits, its runs by status,
 * its schedules and its ten most recent failures with their errors; `null` when no queue registered it.
 */
export async function taskPage(
  page: PageContext,
  operator: Operator,
  name: string,
  notice?: Notice,
): Promise<Fragment | null> {
  const [tasks, failures, schedules] = await Promise.all([
    operator.tasks.list(),
    operator.runs.list({ taskName: name, status: 'failed', limit: 10 }),
    schedulesOf(operator, name),
  ]);
  const task = tasks.find((t) => t.name === name);
  if (task === undefined) return null;
  const body = html`${facts(page, task)}
<section><h2>Runs by status</h2>${counts(page, task)}</section>
<section id="task-schedules"><h2>Schedules</h2>${
    schedules.length === 0
      ? html`<p class="muted">No schedule starts this task.</p>`
      : html`<table id="schedules">${schedulesHead(page)}<tbody>${schedules.map((s) => scheduleRow(page, s))}</tbody></table>`
  }</section>
<section id="recent-failures"><h2>Recent failures</h2>${
    failures.items.length === 0 ? html`<p class="muted">No failed run.</p>` : runsTable(page, failures.items)
  }
<p><a href="${page.base}/runs?${new URLSearchParams({ task: name, status: 'failed' })}">All failed runs →</a></p></section>`;
  return layout(page, `Task ${name}`, body, notice);
}

/** The task's state, versions and limits, and its pause or resume form. */
function facts(page: PageContext, task: TaskInfo): Fragment {
  const verb = task.paused ? 'resume' : 'pause';
  const form = page.readOnly
    ? ''
    : actionForm(page, `${page.base}/tasks/${encodeURIComponent(task.name)}/${verb}`, verb, task.revision);
  return html`<dl id="fields">
<dt>state</dt><dd data-field="state">${task.paused ? html`<strong>paused</strong>: no process claims its runs` : 'active'}</dd>
<dt>versions</dt><dd>${task.versions.join(', ')}</dd>
<dt>flow limits</dt><dd data-field="flow">${flowText(task.flow)}</dd>
<dt>revision</dt><dd>${task.revision}</dd>
</dl>
<section class="actions" id="actions">${form}</section>`;
}

/** The task's runs by status, each count linked to its runs. */
function counts(page: PageContext, task: TaskInfo): Fragment {
  const cells = RUN_STATUSES.map((status) => {
    const n = task.byStatus[status];
    const link = html`<a href="${page.base}/runs?${new URLSearchParams({ task: task.name, status })}">${n}</a>`;
    return html`<td class="num" data-status="${status}">${n === 0 ? html`<span class="muted">0</span>` : link}</td>`;
  });
  return html`<table id="task-counts"><thead><tr>${RUN_STATUSES.map((s) => html`<th>${s}</th>`)}</tr></thead><tbody><tr>${cells}</tr></tbody></table>`;
}

/** The schedules that start this task, among the first `SCHEDULES_READ`. */
async function schedulesOf(operator: Operator, name: string): Promise<ScheduleInfo[]> {
  const found: ScheduleInfo[] = [];
  let cursor: string | undefined;
  let read = 0;
  do {
    const slice = await operator.schedules.list({ limit: 200, ...(cursor ? { cursor } : {}) });
    found.push(...slice.items.filter((s) => s.task.name === name));
    read += slice.items.length;
    cursor = slice.nextCursor ?? undefined;
  } while (cursor !== undefined && read < SCHEDULES_READ);
  return found;
}
