import type { Operator } from '@docket/core';
import { type Context, Hono, type Next } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import {
  RUN_VERBS,
  renderError,
  replayAction,
  runAction,
  SCHEDULE_VERBS,
  scheduleAction,
  TASK_VERBS,
  taskAction,
} from './actions.js';
import { bulkAction } from './bulk.js';
import type { PageContext } from './html.js';
import { feedHead, LIVE_SCRIPT, liveAnswer } from './live.js';
import { noticeOf } from './notices.js';
import type { DashboardConfig } from './options.js';
import { deadLettersPage } from './pages/dead-letters.js';
import { errorPage } from './pages/error.js';
import { overviewPage } from './pages/overview.js';
import { runPage } from './pages/run.js';
import { runsPage } from './pages/runs.js';
import { FILTER_FIELDS, type RunsFilter } from './pages/runs-search.js';
import { schedulesPage } from './pages/schedules.js';
import { taskPage } from './pages/task.js';
import {
  CSRF_COOKIE,
  CsrfKey,
  cookie,
  hasToken,
  hostAllowed,
  localPath,
  randomHex,
  readCookie,
  SECURITY_HEADERS,
  sameText,
  TOKEN_COOKIE,
} from './security.js';
import { FAVICON, STYLE } from './style.js';

/** The Hono environment of the dashboard's routes: each request's page context. */
export type DashboardEnv = { Variables: { page: PageContext } };

/** Builds the dashboard's routes: guards first (headers, token, CSRF cookie, POST checks), then pages and actions. */
export function buildApp(config: DashboardConfig): Hono<DashboardEnv> {
  const app = new Hono<DashboardEnv>({ strict: false });
  const csrf = new CsrfKey();
  const root = config.basePath === '' ? app : app.basePath(config.basePath);
  // A form is small: a larger body is refused at its Content-Length, or once that much of it has arrived.
  root.use('*', bodyLimit({ maxSize: MAX_FORM_BYTES, onError: (c) => c.text('413: the form is too large', 413) }));
  root.use('*', (c, next) => guard(c, next, config, csrf));
  root.get('/assets/style.css', (c) => c.body(STYLE, 200, { 'content-type': 'text/css; charset=utf-8' }));
  root.get('/assets/live.js', (c) => c.body(LIVE_SCRIPT, 200, { 'content-type': 'text/javascript; charset=utf-8' }));
  root.get('/live', async (c) => c.json(await liveAnswer(await config.operator(), c.req.query('after'))));
  root.get('/assets/favicon.svg', (c) => c.body(FAVICON, 200, { 'content-type': 'image/svg+xml' }));
  root.get('/', async (c) =>
    c.html(await overviewPage(c.get('page'), await config.operator(), noticeOf(c.req.query('notice')))),
  );
  root.get('/runs', async (c) => {
    const filter: RunsFilter = { cursor: c.req.query('cursor') };
    for (const name of FILTER_FIELDS) filter[name] = c.req.query(name);
    return c.html(await runsPage(c.get('page'), await config.operator(), filter));
  });
  root.get('/runs/:id', async (c) => {
    const operator = await config.operator();
    const runId = c.req.param('id');
    const [run, history] = await Promise.all([operator.runs.get(runId), operator.runs.history(runId)]);
    if (run === null) return c.html(errorPage(c.get('page'), 'Run not found', `no run ${runId}`), 404);
    const children = run.children.total > 0 ? await operator.runs.list({ parentRunId: runId, limit: 50 }) : null;
    return c.html(runPage(c.get('page'), run, history, noticeOf(c.req.query('notice')), children));
  });
  root.get('/tasks/:name', async (c) => {
    const name = c.req.param('name');
    const shown = await taskPage(c.get('page'), await config.operator(), name, noticeOf(c.req.query('notice')));
    return shown === null ? c.html(errorPage(c.get('page'), 'Task not found', `no task ${name}`), 404) : c.html(shown);
  });
  root.get('/dead-letters', async (c) =>
    c.html(
      await deadLettersPage(
        c.get('page'),
        await config.operator(),
        c.req.query('cursor'),
        noticeOf(c.req.query('notice')),
      ),
    ),
  );
  root.get('/schedules', async (c) =>
    c.html(
      await schedulesPage(
        c.get('page'),
        await config.operator(),
        c.req.query('cursor'),
        noticeOf(c.req.query('notice')),
      ),
    ),
  );
  root.post('/runs/bulk', (c) => post(c, config, null, bulkAction));
  root.post('/runs/:id/:verb', (c) => post(c, config, RUN_VERBS, runAction));
  root.post('/dead-letters/:eventId/replay', (c) => post(c, config, null, replayAction));
  root.post('/schedules/:id/:verb', (c) => post(c, config, SCHEDULE_VERBS, scheduleAction));
  root.post('/tasks/:name/:verb', (c) => post(c, config, TASK_VERBS, taskAction));
  app.notFound((c) => c.html(errorPage(c.get('page') ?? fallbackPage(config), 'Not found', 'no such page'), 404));
  app.onError((error, c) => {
    if (c.get('page') === undefined) c.set('page', fallbackPage(config));
    return renderError(c, error);
  });
  return app;
}

/** The largest form body the dashboard reads: its forms hold a reason and a few short fields. */
const MAX_FORM_BYTES = 64 * 1024;

/** The page context of a request that never reached the guard (no forms can be built for it). */
function fallbackPage(config: DashboardConfig): PageContext {
  return { base: config.basePath, csrf: '', readOnly: true, feed: '' };
}

type Action = (c: Context<DashboardEnv>, operator: Operator, form: Record<string, unknown>) => Promise<Response>;

/** A form post: a known verb, then the action with the parsed form (the guard checked the CSRF field already). */
async function post(
  c: Context<DashboardEnv>,
  config: DashboardConfig,
  verbs: Set<string> | null,
  action: Action,
): Promise<Response> {
  if (verbs !== null && !verbs.has(c.req.param('verb') ?? '')) {
    return c.html(errorPage(c.get('page'), 'Not found', 'no such action'), 404);
  }
  return action(c, await config.operator(), (await formOf(c)) ?? {});
}

/** The request's form, or `null` when its body is no readable form (malformed multipart, wrong encoding). */
async function formOf(c: Context<DashboardEnv>): Promise<Record<string, unknown> | null> {
  try {
    // Repeated fields (the bulk form's boxes) come as arrays; every other field is one string.
    return await c.req.parseBody({ all: true });
  } catch {
    return null;
  }
}

/**
 * Every request: security headers; the token (a `?token=` visit sets its cookie and redirects without it); the CSRF
 * cookie and this page's form field; and for a POST, read-only mode, the origin and the CSRF field.
 */
async function guard(c: Context<DashboardEnv>, next: Next, config: DashboardConfig, csrf: CsrfKey) {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
  if (!hostAllowed(new URL(c.req.url).hostname, config.allowedHosts)) {
    return c.text('421: this dashboard does not answer for this host (see allowedHosts)', 421);
  }
  const cookiePath = config.basePath || '/';
  if (config.token !== null) {
    const given = c.req.query('token');
    if (given !== undefined && c.req.method === 'GET' && sameText(given, config.token)) {
      const url = new URL(c.req.url);
      url.searchParams.delete('token');
      c.header('set-cookie', cookie(TOKEN_COOKIE, config.token, cookiePath), { append: true });
      return c.redirect(localPath(url.pathname, url.search), 303);
    }
    if (!hasToken(c.req.raw, config.token)) {
      c.header('www-authenticate', 'Bearer realm="docket"');
      return c.text('401: this dashboard needs its token (Authorization: Bearer <token>, or ?token=<token> once)', 401);
    }
  }
  let browser = readCookie(c.req.raw, CSRF_COOKIE);
  if (browser === null || !/^[0-9a-f]{64}$/.test(browser)) {
    browser = randomHex(32);
    c.header('set-cookie', cookie(CSRF_COOKIE, browser, cookiePath), { append: true });
  }
  c.set('page', {
    base: config.basePath,
    csrf: await csrf.tokenFor(browser),
    readOnly: config.readOnly,
    feed: isPage(c) ? await feedHead(await config.operator()).catch(() => '') : '',
  });
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
    const refused = await refusePost(c, config, csrf);
    if (refused !== null) return refused;
  }
  await next();
}

/** Whether the request asks for an HTML page (a GET that is not an asset or the live endpoint). */
function isPage(c: Context<DashboardEnv>): boolean {
  const path = new URL(c.req.url).pathname;
  return c.req.method === 'GET' && !/\/(assets\/[^/]+|live)$/.test(path);
}

/** Why a POST is refused (403), or `null`: read-only mode, another origin, or a missing or foreign CSRF field. */
async function refusePost(c: Context<DashboardEnv>, config: DashboardConfig, csrf: CsrfKey) {
  const page = c.get('page');
  if (config.readOnly) return c.html(errorPage(page, 'Read-only', 'this dashboard is read-only'), 403);
  const origin = c.req.header('origin');
  if (origin !== undefined && hostOf(origin) !== new URL(c.req.url).host) {
    return c.html(errorPage(page, 'Refused', 'the form was posted from another origin'), 403);
  }
  const form = await formOf(c);
  if (form === null) return c.html(errorPage(page, 'Bad request', 'the form could not be read'), 400);
  if (!(await csrf.verify(c.req.raw, form.csrf))) {
    return c.html(errorPage(page, 'Refused', 'the form is stale or foreign: reload the page and try again'), 403);
  }
  return null;
}

/** The host of an `Origin` header (`null` for `null` or anything unparsable). */
function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}
