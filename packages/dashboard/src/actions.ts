import { isDocketError, type Operator } from '@docket/core';
import type { Context } from 'hono';
import type { DashboardEnv } from './app.js';
import { staleNotice } from './notices.js';
import { deadLettersPage } from './pages/dead-letters.js';
import { errorPage, statusOf } from './pages/error.js';
import { overviewPage } from './pages/overview.js';
import { runPage } from './pages/run.js';
import { schedulesPage } from './pages/schedules.js';

/** The run verbs a form may post. */
export const RUN_VERBS = new Set(['pause', 'resume', 'cancel', 'retry']);
/** The schedule verbs a form may post. */
export const SCHEDULE_VERBS = new Set(['pause', 'resume', 'run-now']);
/** The task verbs a form may post. */
export const TASK_VERBS = new Set(['pause', 'resume']);

type Form = Record<string, unknown>;

/** The command fields of a posted form, as the operator API takes them (it checks them). */
function command(form: Form) {
  const revision = form.expectedRevision;
  return {
    expectedRevision: typeof revision === 'string' && /^\d{1,15}$/.test(revision) ? Number(revision) : revision,
    reason: form.reason,
    commandId: form.commandId,
  } as { expectedRevision: number; reason: string; commandId: string };
}

/** POST `/runs/:id/:verb`: applies the command, then shows the run; a stale revision shows it unchanged (409). */
export async function runAction(c: Context<DashboardEnv>, operator: Operator, form: Form): Promise<Response> {
  const runId = c.req.param('id') as string;
  const verb = c.req.param('verb') as 'pause' | 'resume' | 'cancel' | 'retry';
  const page = c.get('page');
  try {
    const result = await operator.runs[verb]({ runId, ...command(form) });
    if (result.kind === 'not_found') return c.html(errorPage(page, 'Run not found', `no run ${runId}`), 404);
    return c.redirect(`${page.base}/runs/${runId}?notice=${verb}:${result.kind}`, 303);
  } catch (error) {
    if (!isDocketError(error, 'REVISION_CONFLICT')) throw error;
    const [run, history] = await Promise.all([operator.runs.get(runId), operator.runs.history(runId)]);
    if (run === null) return c.html(errorPage(page, 'Run not found', `no run ${runId}`), 404);
    return c.html(runPage(page, run, history, staleNotice('The run', form.expectedRevision, run.revision)), 409);
  }
}

/** POST `/dead-letters/:eventId/replay`: sends the dead letter back to its callback loop. */
export async function replayAction(c: Context<DashboardEnv>, operator: Operator, form: Form): Promise<Response> {
  const eventId = c.req.param('eventId') as string;
  const page = c.get('page');
  try {
    const result = await operator.deadLetters.replay({ eventId, ...command(form) });
    if (result.kind === 'not_found')
      return c.html(errorPage(page, 'Dead letter not found', `no event ${eventId}`), 404);
    return c.redirect(`${page.base}/dead-letters?notice=replay:${result.kind}`, 303);
  } catch (error) {
    if (!isDocketError(error, 'REVISION_CONFLICT')) throw error;
    return c.html(await deadLettersPage(page, operator, undefined, staleNotice('The dead letter', null)), 409);
  }
}

/**
 * POST `/schedules/:id/:verb`: pauses or resumes a schedule, or starts one run of it now (then shows that run).
 */
export async function scheduleAction(c: Context<DashboardEnv>, operator: Operator, form: Form): Promise<Response> {
  const id = c.req.param('id') as string;
  const verb = c.req.param('verb') as 'pause' | 'resume' | 'run-now';
  const page = c.get('page');
  if (verb === 'run-now') {
    const { reason, commandId } = command(form);
    const result = await operator.schedules.runNow({ id, reason, commandId });
    if (result.kind === 'not_found') return c.html(errorPage(page, 'Schedule not found', `no schedule ${id}`), 404);
    return c.redirect(`${page.base}/runs/${result.runId}?notice=run-now:applied`, 303);
  }
  try {
    const result = await operator.schedules[verb]({ id, ...command(form) });
    if (result.kind === 'not_found') return c.html(errorPage(page, 'Schedule not found', `no schedule ${id}`), 404);
    return c.redirect(`${page.base}/schedules?notice=${verb}:${result.kind}`, 303);
  } catch (error) {
    if (!isDocketError(error, 'REVISION_CONFLICT')) throw error;
    return c.html(await schedulesPage(page, operator, undefined, staleNotice('The schedule', null)), 409);
  }
}

/** POST `/tasks/:name/:verb`: pauses or resumes a task for the whole fleet, then shows the overview. */
export async function taskAction(c: Context<DashboardEnv>, operator: Operator, form: Form): Promise<Response> {
  const task = c.req.param('name') as string;
  const verb = c.req.param('verb') as 'pause' | 'resume';
  const page = c.get('page');
  try {
    const result = await operator.tasks[verb]({ task, ...command(form) });
    if (result.kind === 'not_found') return c.html(errorPage(page, 'Task not found', `no task ${task}`), 404);
    return c.redirect(`${page.base}/?notice=${verb}:${result.kind}`, 303);
  } catch (error) {
    if (!isDocketError(error, 'REVISION_CONFLICT')) throw error;
    return c.html(await overviewPage(page, operator, staleNotice('The task', null)), 409);
  }
}

/** Renders an error thrown by a page or an action as its page, with the status its code calls for. */
export function renderError(c: Context<DashboardEnv>, error: unknown): Response | Promise<Response> {
  const status = statusOf(error);
  return c.html(errorPage(c.get('page'), status === 400 ? 'Refused' : 'Something went wrong', error), status);
}
