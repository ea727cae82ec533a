import type { Operator, RunListItem, RunStatus } from '@docket/core';
import { html } from 'hono/html';
import type { Fragment, PageContext } from '../html.js';

/** The filter of the runs page, as the query string gives it. */
export interface RunsFilter {
  /** A run id, or an idempotency key (looked up in the chosen task, else in every task). */
  q?: string;
  task?: string;
  status?: string;
  group?: string;
  /** Created at or after (a `datetime-local` value, read as UTC). */
  from?: string;
  /** Created before. */
  to?: string;
  /** Only the children of this run. */
  parent?: string;
  /** Only the runs this schedule made (with `task`, the schedule's task). */
  schedule?: string;
  cursor?: string;
}

/** The filter fields of the runs page, in the order its links keep them. */
export const FILTER_FIELDS = ['q', 'task', 'status', 'group', 'from', 'to', 'parent', 'schedule'] as const;

/** A run id: 32 lowercase hex characters. */
const RUN_ID = /^[0-9a-f]{32}$/;

/** A `datetime-local` value (no zone) as the ISO time of that UTC minute or second. */
function utc(value: string): string {
  const full = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value) ? `${value}:00` : value;
  return /Z$/.test(full) ? full : `${full.slice(0, 19)}.000Z`;
}

/** One page of the runs the filter names: by run id, by key in each task, or through `runs.list`. */
export async function searchRuns(
  operator: Operator,
  filter: RunsFilter,
  limit = 50,
): Promise<{ items: RunListItem[]; nextCursor: string | null }> {
  const q = filter.q?.trim();
  if (q && RUN_ID.test(q)) {
    const run = await operator.runs.get(q);
    return { items: run === null ? [] : [run], nextCursor: null };
  }
  if (q) {
    const tasks = filter.task ? [filter.task] : (await operator.tasks.list()).map((t) => t.name);
    const found = await Promise.all(
      tasks.map((taskName) => operator.runs.list({ taskName, idempotencyKey: q, limit: 1 })),
    );
    return { items: found.flatMap((f) => f.items), nextCursor: null };
  }
  return operator.runs.list({
    ...(filter.task ? { taskName: filter.task } : {}),
    ...(filter.status ? { status: filter.status as RunStatus } : {}),
    ...(filter.group ? { group: filter.group } : {}),
    ...(filter.parent ? { parentRunId: filter.parent } : {}),
    ...(filter.schedule ? { scheduleId: filter.schedule } : {}),
    ...(filter.from ? { createdFrom: utc(filter.from) } : {}),
    ...(filter.to ? { createdTo: utc(filter.to) } : {}),
    ...(filter.cursor ? { cursor: filter.cursor } : {}),
    limit,
  });
}

/** The most runs one "all matching" action reaches: a larger set is a job for a script on the operator API. */
export const BULK_MOST = 1_000;

/** Every run the filter matches (up to `BULK_MOST`), as `runId:revision` targets of a bulk action. */
export async function allMatching(operator: Operator, filter: RunsFilter): Promise<string[]> {
  const targets: string[] = [];
  let cursor: string | undefined;
  do {
    const slice = await searchRuns(operator, { ...filter, ...(cursor ? { cursor } : {}) }, 200);
    for (const run of slice.items) targets.push(`${run.runId}:${run.revision}`);
    cursor = slice.nextCursor ?? undefined;
  } while (cursor !== undefined && targets.length < BULK_MOST);
  return targets.slice(0, BULK_MOST);
}

/** The hidden fields that carry the filter through a bulk form (`f_<name>`). */
export function filterFields(filter: RunsFilter): Fragment {
  return html`${FILTER_FIELDS.map((name) =>
    filter[name] ? html`<input type="hidden" name="f_${name}" value="${filter[name]}">` : '',
  )}`;
}

/** The filter a bulk form carried. */
export function filterOfForm(form: Record<string, unknown>): RunsFilter {
  const filter: RunsFilter = {};
  for (const name of FILTER_FIELDS) {
    const value = form[`f_${name}`];
    if (typeof value === 'string' && value !== '') filter[name] = value;
  }
  return filter;
}

/**
 * The runs table inside the bulk form: a box per run, then the verb, a reason, and whether it acts on the selected
 * runs or on all the filter matches (`total` when the counters know it). Read-only pages get the table alone.
 */
export function bulkForm(page: PageContext, filter: RunsFilter, total: number | null, table: Fragment): Fragment {
  if (page.readOnly) return table;
  const all =
    total === null ? `all runs matching this filter (up to ${BULK_MOST})` : `all ${total} runs matching this filter`;
  return html`<form method="post" action="${page.base}/runs/bulk" id="bulk" class="bulk">
<input type="hidden" name="csrf" value="${page.csrf}">
<input type="hidden" name="batch" value="${crypto.randomUUID()}">
${filterFields(filter)}
${table}
<fieldset class="bulk-controls"><legend>Act on many</legend>
<label><input type="radio" name="scope" value="selected" checked> the selected runs</label>
<label><input type="radio" name="scope" value="all" id="scope-all"> ${all}</label>
<label>Action <select name="verb" id="bulk-verb"><option value="cancel">cancel</option><option value="retry">retry</option><option value="pause">pause</option><option value="resume">resume</option></select></label>
<input type="text" name="reason" required maxlength="500" placeholder="reason" aria-label="reason for the bulk action" id="bulk-reason">
<button type="submit" id="bulk-apply">Apply…</button>
</fieldset>
</form>`;
}
