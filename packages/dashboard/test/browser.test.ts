import { createQueue, type Operator, RUN_STATUSES, type Store } from '@docket/core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDashboard } from '../src/index.js';
import { type ServedDashboard, serveDashboard } from '../src/node.js';
import { HAS_CHROMIUM, launchChromium, type PageWatch, watch } from './browser.js';
import { HOSTILE, type Seeded, seedRuns } from './seed.js';
import { STORE_KINDS } from './stores.js';

const TOKEN = 'browser-token-0123456789abcdef';

if (!HAS_CHROMIUM) {
  if (process.env.CI) throw new Error('CI must have Chromium at /usr/bin/chromium for the dashboard browser tests');
  console.warn('dashboard browser tests left out: no Chromium at /usr/bin/chromium (apt-get install chromium)');
}

describe.runIf(HAS_CHROMIUM).each(STORE_KINDS)('the dashboard in Chromium on $name', (kind) => {
  const cleanups: (() => unknown)[] = [];
  let browser: Browser;
  let store: Store;
  let seeded: Seeded;
  let served: ServedDashboard;
  let ops: Operator;
  let page: Page;
  let seen: PageWatch;

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser.close());
  beforeEach(async () => {
    store = await kind.open(cleanups);
    seeded = await seedRuns(store);
    const dashboard = createDashboard({ store, token: TOKEN });
    cleanups.push(() => dashboard.close());
    served = await serveDashboard(dashboard, { port: 0 });
    cleanups.push(() => served.close());
    const queue = createQueue({ store, logger: false, runtime: { mode: 'producer' } });
    cleanups.push(() => queue.close());
    await queue.ready();
    ops = queue.operator;
    const context = await browser.newContext();
    cleanups.push(() => context.close());
    page = await context.newPage();
    seen = watch(page);
    await page.goto(`${served.url}?token=${TOKEN}`);
  });
  afterEach(async () => {
    expect(seen.dialogs).toEqual([]);
    expect(seen.errors).toEqual([]);
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  /** The number a cell of the overview's counts table shows. */
  const cell = (task: string, status: string) =>
    page.locator(`#counts td[data-task="${task}"][data-status="${status}"]`).innerText();

  it('opens the overview with the numbers of operator.stats() and the settled chart', async () => {
    const stats = await ops.stats();
    for (const status of RUN_STATUSES) expect(Number(await cell('*', status)), status).toBe(stats.byStatus[status]);
    for (const task of stats.byTask) {
      for (const status of RUN_STATUSES) expect(Number(await cell(task.name, status))).toBe(task.byStatus[status]);
    }
    expect(await page.locator('#dead-letters').innerText()).toBe(String(stats.deadLetters));
    const settled = await ops.settled();
    const total = settled.minutes.reduce((sum, m) => sum + m.count, 0);
    expect(await page.locator('#settled-total').innerText()).toBe(String(total));
    expect(await page.locator('#settled-chart rect[data-count]').count()).toBe(60);
  });

  it('filters runs by task and status with the form, newest first', async () => {
    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.selectOption('#filter select[name="task"]', 'release-notice');
    await page.selectOption('#filter select[name="status"]', 'failed');
    await page.click('#filter button');
    await page.waitForURL(/status=failed/);
    const shown = await page
      .locator('#runs tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    const listed = await ops.runs.list({ taskName: 'release-notice', status: 'failed' });
    expect(shown).toEqual(listed.items.map((r) => r.runId));
    expect(shown).toHaveLength(2);
  });

  it('opens a run and reads its history as a timeline', async () => {
    await page.goto(`${served.url}runs/${seeded.failed}`);
    const history = await ops.runs.history(seeded.failed);
    const reasons = await page
      .locator('#history li')
      .evaluateAll((items) => items.map((i) => i.getAttribute('data-reason')));
    expect(reasons).toEqual(history.map((e) => e.reason));
    expect(await page.locator('dd[data-field="status"]').innerText()).toBe('failed');
    expect(JSON.parse(await page.locator('#query').innerText())).toEqual({ topic: 'v2.4', outcome: 'fail' });
  });

  it("goes from a parent to a child and back, and lists the parent's children from its page", async () => {
    await page.goto(`${served.url}runs/${seeded.parent}`);
    const glance = await page
      .locator('#children-glance .child-count')
      .evaluateAll((spans) =>
        spans.map((s) => `${s.getAttribute('data-status')} ${s.textContent?.trim().split(' ').at(-1)}`),
      );
    expect(glance.sort()).toEqual(['failed 1', 'success 2']);
    await page.locator(`#children a[href$="/runs/${seeded.children[2]}"]`).click();
    await page.waitForURL(`**/runs/${seeded.children[2]}`);
    expect(await page.locator('dd[data-field="status"]').innerText()).toBe('failed');
    await page.locator('#parent').click();
    await page.waitForURL(`**/runs/${seeded.parent}`);
    await page.locator('#all-children').click();
    await page.waitForURL(`**/runs?parent=${seeded.parent}`);
    const listed = await page
      .locator('#runs tr[data-run-id]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    expect(listed).toEqual([...seeded.children].reverse());
  });

  it('shows a pause with a stale revision as a conflict, then cancels and shows OPERATOR_STOP', async () => {
    const [runId] = seeded.pending as [string];
    await page.goto(`${served.url}runs/${runId}`);
    const shown = await ops.runs.get(runId);
    await ops.runs.pause({ runId, expectedRevision: shown?.revision as number, reason: 'elsewhere', commandId: 'b1' });
    const paused = await ops.runs.get(runId);
    await ops.runs.resume({ runId, expectedRevision: paused?.revision as number, reason: 'back', commandId: 'b2' });
    await page.fill('form[data-verb="pause"] input[name="reason"]', 'hold for the release');
    await page.click('form[data-verb="pause"] button');
    await expect.poll(() => page.locator('#notice').innerText()).toContain('changed since you looked');
    // The conflict page is a 409, which Chromium reports on the console: the one error this test expects.
    expect(seen.errors.splice(0)).toEqual([expect.stringContaining('409 (Conflict)')]);
    const current = await ops.runs.get(runId);
    expect(current?.status).toBe('pending');
    expect(await page.locator('dd[data-field="revision"]').innerText()).toBe(String(current?.revision));
    await page.fill('form[data-verb="cancel"] input[name="reason"]', 'release withdrawn');
    await page.click('form[data-verb="cancel"] button');
    await expect.poll(() => page.locator('#notice').innerText()).toBe('cancel: applied.');
    expect(await page.locator('#history li').last().getAttribute('data-reason')).toBe('OPERATOR_STOP');
    expect(await page.locator('#history li').last().innerText()).toContain('release withdrawn');
    expect((await ops.runs.get(runId))?.status).toBe('cancelled');
  });

  it('replays a dead letter', async () => {
    await page.goto(`${served.url}dead-letters`);
    const before = await ops.deadLetters.list();
    expect(await page.locator('#dead-letters tbody tr').count()).toBe(before.items.length);
    const first = before.items[0];
    const row = page.locator(`tr[data-event-id="${first?.eventId}"]`);
    await row.locator('input[name="reason"]').fill('webhook fixed');
    await row.locator('button').click();
    await expect.poll(() => page.locator('#notice').innerText()).toBe('replay: applied.');
    expect((await ops.deadLetters.list()).items.map((d) => d.eventId)).not.toContain(first?.eventId);
    expect(await page.locator(`tr[data-event-id="${first?.eventId}"]`).count()).toBe(0);
  });

  it('renders a run whose query and error hold HTML as text, running no script', async () => {
    await page.goto(`${served.url}runs/${seeded.hostile}`);
    const query = JSON.parse(await page.locator('#query').innerText());
    expect(query).toMatchObject({ topic: HOSTILE.script, title: HOSTILE.attribute });
    expect(JSON.parse(await page.locator('#error').innerText())).toMatchObject({ message: HOSTILE.error });
    expect(await page.locator('main img, main script').count()).toBe(0);
    await page.goto(`${served.url}dead-letters`);
    expect(await page.locator('main img, main script').count()).toBe(0);
  });

  it('refuses a request without the token, and read-only mode has no forms', async () => {
    const other = await browser.newContext();
    cleanups.push(() => other.close());
    const stranger = await other.newPage();
    const response = await stranger.goto(served.url);
    expect(response?.status()).toBe(401);
    const readOnly = createDashboard({ store, readOnly: true });
    cleanups.push(() => readOnly.close());
    const servedReadOnly = await serveDashboard(readOnly, { port: 0 });
    cleanups.push(() => servedReadOnly.close());
    for (const path of ['', `runs/${seeded.pending[0]}`, `runs/${seeded.failed}`, 'dead-letters', 'schedules']) {
      await page.goto(`${servedReadOnly.url}${path}`);
      expect(await page.locator('#read-only').count()).toBe(1);
      expect(await page.locator('form[method="post"]').count(), path).toBe(0);
    }
  });
});
