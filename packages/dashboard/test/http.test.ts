import { createQueue, isDocketError, RUN_STATUSES, type Store } from '@docket/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDashboard, type Dashboard } from '../src/index.js';
import { Client } from './client.js';
import { type Seeded, seedRuns } from './seed.js';
import { STORE_KINDS } from './stores.js';

const TOKEN = 'test-token-0123456789abcdef';

describe.each(STORE_KINDS)('the dashboard handler on $name', (kind) => {
  const cleanups: (() => unknown)[] = [];
  let store: Store;
  let seeded: Seeded;
  let dashboard: Dashboard;

  beforeEach(async () => {
    store = await kind.open(cleanups);
    seeded = await seedRuns(store);
    dashboard = createDashboard({ store });
    cleanups.push(() => dashboard.close());
  });
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  /** The operator API of a second queue on the same store: what the tests compare the pages with. */
  async function operator() {
    const queue = createQueue({ store, logger: false, runtime: { mode: 'producer' } });
    cleanups.push(() => queue.close());
    await queue.ready();
    return queue.operator;
  }

  it('refuses bad options with CONFIG_INVALID', () => {
    const bad: unknown[] = [
      null,
      [],
      {},
      { store, queue: {} },
      { store, basePath: 'docket' },
      { store, basePath: '/docket/' },
      { store, basePath: '/a b' },
      { store, token: 'short' },
      { store, token: 'has spaces in it, sixteen+' },
      { store, readOnly: 'yes' },
      { store, port: 4620 },
      { store, constructor: 1 },
      { queue: {}, namespace: 'x' },
      { store: {} },
    ];
    for (const options of bad) {
      let error: unknown;
      try {
        createDashboard(options as never);
      } catch (e) {
        error = e;
      }
      expect(isDocketError(error, 'CONFIG_INVALID'), `options #${bad.indexOf(options)}`).toBe(true);
    }
  });

  it('shows on the overview the counts operator.stats() gives, by task and status', async () => {
    const page = await (await new Client(dashboard).get('/')).text();
    const stats = await (await operator()).stats();
    for (const status of RUN_STATUSES) {
      const cell = new RegExp(`data-task="\\*" data-status="${status}">(?:<span class="muted">)?<?a?[^>]*>?(\\d+)<`);
      expect(Number(page.match(cell)?.[1]), status).toBe(stats.byStatus[status]);
    }
    // The batch's three, the digest and two of its summaries succeeded; the notices and a summary failed.
    expect(stats.byStatus).toMatchObject({ success: 6, failed: 3, pending: 2, waiting: 1 });
    expect(page).toContain(`id="dead-letters">2<`);
    expect(page).toMatch(/id="settled-total">9</);
  });

  it('escapes everything a run carries: query, error and history detail', async () => {
    const page = await (await new Client(dashboard).get(`/runs/${seeded.hostile}`)).text();
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;script&gt;alert(');
    expect(page).toContain('&lt;img src=x onerror=alert(');
    const letters = await (await new Client(dashboard).get('/dead-letters')).text();
    expect(letters).not.toContain('<img src=x');
  });

  it("links a parent's page to its children, with their statuses at a glance, and each child's page to its parent", async () => {
    const client = new Client(dashboard);
    const parent = await (await client.get(`/runs/${seeded.parent}`)).text();
    expect(parent).toMatch(/data-field="children">3 of 3 settled</);
    expect(parent).toMatch(/data-status="success">.*success.* 2</s);
    expect(parent).toMatch(/data-status="failed">.*failed.* 1</s);
    for (const child of seeded.children) expect(parent).toContain(`href="/runs/${child}"`);
    expect(parent).toContain(`href="/runs?parent=${seeded.parent}"`);
    const child = await (await client.get(`/runs/${seeded.children[0]}`)).text();
    expect(child).toContain(`id="parent" href="/runs/${seeded.parent}"`);
    expect(child).not.toContain('id="children"');
    const listed = await (await client.get(`/runs?parent=${seeded.parent}`)).text();
    for (const id of seeded.children) expect(listed).toContain(`data-run-id="${id}"`);
    expect(listed).not.toContain(`data-run-id="${seeded.parent}"`);
    expect((await client.get('/runs?parent=nope')).status).toBe(400);
  });

  it('answers 404 for an unknown run and 400 with the code for a bad filter or cursor', async () => {
    const client = new Client(dashboard);
    expect((await client.get(`/runs/${'0'.repeat(32)}`)).status).toBe(404);
    expect((await client.get('/nowhere')).status).toBe(404);
    for (const path of ['/runs?status=bogus', '/runs?task=%3Cb%3E', '/runs?cursor=forged', '/dead-letters?cursor=x']) {
      const response = await client.get(path);
      expect(response.status, path).toBe(400);
      expect(await response.text()).toMatch(path.includes('cursor') ? /CURSOR_INVALID/ : /CONFIG_INVALID/);
    }
  });

  it('applies a form with its CSRF field and refuses one without it, from another origin or another browser', async () => {
    const [runId] = seeded.pending as [string];
    const ops = await operator();
    const before = await ops.runs.get(runId);
    const client = new Client(dashboard);
    const fields = await client.formOf(`/runs/${runId}`, `/runs/${runId}/pause`);
    expect(fields.expectedRevision).toBe(String(before?.revision));
    const stranger = new Client(dashboard);
    await stranger.get('/');
    const refusals = [
      await client.post(`/runs/${runId}/pause`, { ...fields, csrf: '', reason: 'no csrf' }),
      await stranger.post(`/runs/${runId}/pause`, { ...fields, reason: 'their csrf' }),
      await client.post(`/runs/${runId}/pause`, { ...fields, reason: 'x' }, { origin: 'http://evil.example' }),
    ];
    expect(refusals.map((r) => r.status)).toEqual([403, 403, 403]);
    expect((await ops.runs.get(runId))?.revision).toBe(before?.revision);
    const done = await client.post(`/runs/${runId}/pause`, { ...fields, reason: 'maintenance' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/runs/${runId}?notice=pause:applied`);
    expect((await ops.runs.get(runId))?.status).toBe('paused');
  });

  it('shows a stale form as a conflict with the current run, applying nothing', async () => {
    const [runId] = seeded.pending as [string];
    const client = new Client(dashboard);
    const fields = await client.formOf(`/runs/${runId}`, `/runs/${runId}/cancel`);
    const ops = await operator();
    const run = await ops.runs.get(runId);
    await ops.runs.pause({ runId, expectedRevision: run?.revision as number, reason: 'elsewhere', commandId: 'x1' });
    const response = await client.post(`/runs/${runId}/cancel`, { ...fields, reason: 'too late' });
    expect(response.status).toBe(409);
    const page = await response.text();
    expect(page).toContain('changed since you looked');
    expect(page).toContain('<span class="status status-paused">paused</span>');
    expect((await ops.runs.get(runId))?.status).toBe('paused');
  });

  it('pauses and resumes a schedule from its form; a stale form is a conflict that changes nothing', async () => {
    const id = seeded.schedule;
    const client = new Client(dashboard);
    const listed = await (await client.get('/schedules')).text();
    expect(listed).toContain(`data-schedule-id="${id}"`);
    expect(listed).toContain('0 * * * *');
    const pause = await client.formOf('/schedules', `/schedules/${id}/pause`);
    const paused = await client.post(`/schedules/${id}/pause`, { ...pause, reason: 'holiday' });
    expect(paused.headers.get('location')).toBe('/schedules?notice=pause:applied');
    const ops = await operator();
    const [after] = (await ops.schedules.list()).items;
    expect(after).toMatchObject({ id, enabled: false });
    const stale = await client.post(`/schedules/${id}/pause`, { ...pause, commandId: 'stale-1', reason: 'again' });
    expect(stale.status).toBe(409);
    expect(await stale.text()).toContain('changed since you looked');
    expect((await ops.schedules.list()).items[0]?.revision).toBe(after?.revision);
    const resume = await client.formOf('/schedules', `/schedules/${id}/resume`);
    expect(resume.expectedRevision).toBe(String(after?.revision));
    await client.post(`/schedules/${id}/resume`, { ...resume, reason: 'back' });
    expect((await ops.schedules.list()).items[0]).toMatchObject({ id, enabled: true });
  });

  it("pauses and resumes a task from the overview's form; a stale form is a conflict that changes nothing", async () => {
    const client = new Client(dashboard);
    const overview = await (await client.get('/')).text();
    expect(overview).toContain('data-task-name="ingest"');
    const pause = await client.formOf('/', '/tasks/ingest/pause');
    const paused = await client.post('/tasks/ingest/pause', { ...pause, reason: 'provider outage' });
    expect(paused.headers.get('location')).toBe('/?notice=pause:applied');
    const ops = await operator();
    const after = (await ops.tasks.list()).find((t) => t.name === 'ingest');
    expect(after).toMatchObject({ paused: true });
    expect(await (await client.get('/')).text()).toMatch(/data-task-name="ingest">[\s\S]*?data-paused="true"/);
    const stale = await client.post('/tasks/ingest/pause', { ...pause, commandId: 'stale-1', reason: 'again' });
    expect(stale.status).toBe(409);
    expect(await stale.text()).toContain('changed since you looked');
    expect((await ops.tasks.list()).find((t) => t.name === 'ingest')?.revision).toBe(after?.revision);
    const resume = await client.formOf('/', '/tasks/ingest/resume');
    await client.post('/tasks/ingest/resume', { ...resume, reason: 'back' });
    expect((await ops.tasks.list()).find((t) => t.name === 'ingest')).toMatchObject({ paused: false });
  });

  it('in read-only mode shows no form and refuses every POST with 403', async () => {
    const readOnly = createDashboard({ store, readOnly: true });
    cleanups.push(() => readOnly.close());
    const client = new Client(readOnly);
    const paths = ['/', '/runs', `/runs/${seeded.pending[0]}`, `/runs/${seeded.failed}`, '/dead-letters', '/schedules'];
    for (const path of paths) {
      const page = await (await client.get(path)).text();
      expect(page, path).not.toContain('<form method="post"');
    }
    const fields = await new Client(dashboard).formOf(`/runs/${seeded.failed}`, `/runs/${seeded.failed}/retry`);
    const response = await client.post(`/runs/${seeded.failed}/retry`, { ...fields, reason: 'no' });
    expect(response.status).toBe(403);
    expect((await (await operator()).runs.get(seeded.failed))?.status).toBe('failed');
  });

  it('with a token refuses requests without it (401) and takes it as a bearer header or once as ?token=', async () => {
    const guarded = createDashboard({ store, token: TOKEN, basePath: '/docket' });
    cleanups.push(() => guarded.close());
    expect((await new Client(guarded).get('/docket/')).status).toBe(401);
    expect((await new Client(guarded).get('/docket/runs?token=wrong-token-0123456789')).status).toBe(401);
    expect((await new Client(guarded, { authorization: `Bearer ${TOKEN}` }).get('/docket/runs')).status).toBe(200);
    const browser = new Client(guarded);
    const visit = await browser.get(`/docket/runs?status=failed&token=${TOKEN}`);
    expect(visit.status).toBe(303);
    expect(visit.headers.get('location')).toBe('/docket/runs?status=failed');
    const page = await browser.get('/docket/runs?status=failed');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`href="/docket/runs/${seeded.failed}"`);
  });

  it('answers only its own hosts: a rebinding request for another host is refused, even a POST with its form', async () => {
    const [runId] = seeded.pending as [string];
    const ops = await operator();
    const before = await ops.runs.get(runId);
    const client = new Client(dashboard);
    const fields = await client.formOf(`/runs/${runId}`, `/runs/${runId}/cancel`);
    const forged = (path: string, init: RequestInit = {}) =>
      dashboard(new Request(`http://evil.example:4620${path}`, { redirect: 'manual', ...init }));
    expect((await forged('/')).status).toBe(421);
    const post = await forged(`/runs/${runId}/cancel`, {
      method: 'POST',
      body: new URLSearchParams({ ...fields, reason: 'rebound' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://evil.example:4620' },
    });
    expect(post.status).toBe(421);
    expect((await ops.runs.get(runId))?.revision).toBe(before?.revision);
    for (const host of ['localhost', '[::1]']) {
      const local = await dashboard(new Request(`http://${host}:4620/runs`));
      expect(local.status, host).toBe(200);
    }
    const listed = createDashboard({ store, allowedHosts: ['docket.internal'] });
    cleanups.push(() => listed.close());
    expect((await listed(new Request('http://docket.internal/runs'))).status).toBe(200);
    expect((await listed(new Request('http://evil.example/runs'))).status).toBe(421);
  });

  it('answers 400 to a malformed cookie or body and 413 to a form too large, and never redirects off-site', async () => {
    const [runId] = seeded.pending as [string];
    const broken = await dashboard(
      new Request('http://127.0.0.1:4620/', { headers: { cookie: 'docket_csrf=%E0%A4%A' } }),
    );
    expect(broken.status).toBe(200);
    const client = new Client(dashboard);
    const fields = await client.formOf(`/runs/${runId}`, `/runs/${runId}/pause`);
    const multipart = await client.post(`/runs/${runId}/pause`, fields, {
      'content-type': 'multipart/form-data; boundary=nope',
    });
    expect(multipart.status).toBe(400);
    const huge = await client.post(`/runs/${runId}/pause`, { ...fields, reason: 'x'.repeat(20 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect((await (await operator()).runs.get(runId))?.status).toBe('pending');
    const guarded = createDashboard({ store, token: TOKEN });
    cleanups.push(() => guarded.close());
    for (const path of [`//evil.example/?token=${TOKEN}`, `/\\evil.example/?token=${TOKEN}`]) {
      const visit = await guarded(new Request(`http://127.0.0.1:4620${path}`, { redirect: 'manual' }));
      const location = visit.headers.get('location') ?? '';
      expect(location.startsWith('/'), path).toBe(true);
      expect(/^[/\\]{2}/.test(location), `${path} -> ${location}`).toBe(false);
    }
  });
});
