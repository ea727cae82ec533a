import { isDocketError, type Operator } from '@docket/core';
import type { Context } from 'hono';
import { html } from 'hono/html';
import type { DashboardEnv } from './app.js';
import { type Fragment, layout, type PageContext } from './html.js';
import { errorPage } from './pages/error.js';
import { runsPage } from './pages/runs.js';
import { allMatching, filterFields, filterOfForm } from './pages/runs-search.js';

type Verb = 'cancel' | 'retry' | 'pause' | 'resume';
const VERBS = new Set<string>(['cancel', 'retry', 'pause', 'resume']);

/** How a bulk action's commands came out. */
export interface BulkTally {
  applied: number;
  noop: number;
  conflict: number;
  missing: number;
}

/** The `runId:revision` values a form posted (one box or many). */
function selected(form: Record<string, unknown>): string[] {
  const value = form.run;
  const all = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return all.filter((v): v is string => typeof v === 'string' && /^[0-9a-f]{32}:\d{1,15}$/.test(v));
}

/**
 * POST `/runs/bulk`: one operator command per run, selected by box or by the filter, each with its own command id
 * (`bulk-<batch>-<runId>`, so posting the same form again applies nothing twice). A cancel asks first: without
 * `confirm=yes` it shows what it would cancel and a button that says so. Then the runs page with the tally.
 */
export async function bulkAction(
  c: Context<DashboardEnv>,
  operator: Operator,
  form: Record<string, unknown>,
): Promise<Response> {
  const page = c.get('page');
  const verb = String(form.verb);
  const batch = String(form.batch ?? '');
  if (!VERBS.has(verb) || !/^[0-9a-f-]{36}$/.test(batch)) {
    return c.html(errorPage(page, 'Refused', 'this bulk form is not one the dashboard made'), 400);
  }
  const filter = filterOfForm(form);
  const targets = form.scope === 'all' ? await allMatching(operator, filter) : selected(form);
  if (targets.length === 0)
    return c.html(
      await runsPage(page, operator, filter, { tone: 'warn', text: 'No run was selected: nothing was applied.' }),
      200,
    );
  if (verb === 'cancel' && form.confirm !== 'yes') return c.html(confirmPage(page, form, targets));
  const tally = await applyAll(operator, verb as Verb, targets, String(form.reason ?? ''), batch);
  const text = `${verb}: ${tally.applied} applied, ${tally.noop} no-ops, ${tally.conflict} conflicts${tally.missing ? `, ${tally.missing} gone` : ''} (of ${targets.length}).`;
  const tone = tally.conflict > 0 ? 'warn' : 'ok';
  return c.html(await runsPage(page, operator, filter, { tone, text }));
}

/** Runs each command, eight at a time, and counts what came of them; a stale revision is a conflict, not a failure. */
async function applyAll(operator: Operator, verb: Verb, targets: string[], reason: string, batch: string) {
  const tally: BulkTally = { applied: 0, noop: 0, conflict: 0, missing: 0 };
  let next = 0;
  const worker = async () => {
    while (next < targets.length) {
      const [runId, revision] = (targets[next++] as string).split(':') as [string, string];
      const command = { runId, expectedRevision: Number(revision), reason, commandId: `bulk-${batch}-${runId}` };
      try {
        const result = await operator.runs[verb](command);
        if (result.kind === 'not_found') tally.missing++;
        else tally[result.kind]++;
      } catch (error) {
        if (!isDocketError(error, 'REVISION_CONFLICT')) throw error;
        tally.conflict++;
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return tally;
}

/** The question before a bulk cancel: how many runs, and a red button that re-posts the same form with `confirm`. */
function confirmPage(page: PageContext, form: Record<string, unknown>, targets: string[]): Fragment {
  const reason = String(form.reason ?? '');
  const body = html`<p id="confirm-text">Cancel <strong data-count="${targets.length}">${targets.length}</strong> runs? A cancelled run does not run again; its reason will be “${reason}”.</p>
<form method="post" action="${page.base}/runs/bulk" id="confirm">
<input type="hidden" name="csrf" value="${page.csrf}">
<input type="hidden" name="batch" value="${String(form.batch)}">
<input type="hidden" name="verb" value="cancel">
<input type="hidden" name="reason" value="${reason}">
<input type="hidden" name="confirm" value="yes">
${filterFields(filterOfForm(form))}
${targets.map((t) => html`<input type="hidden" name="run" value="${t}">`)}
<input type="hidden" name="scope" value="selected">
<button type="submit" class="danger" id="confirm-cancel">Cancel ${targets.length} runs</button>
<a href="${page.base}/runs">Keep them</a>
</form>`;
  return layout(page, 'Cancel runs?', body);
}
