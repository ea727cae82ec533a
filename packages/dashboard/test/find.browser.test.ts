import { createQueue, type Operator, type Store } from '@docket/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freshPage, HAS_CHROMIUM, launchChromium, type PageWatch, servedDashboard } from './browser.js';
import { type Seeded, seedRuns } from './seed.js';
import { STORE_KINDS } from './stores.js';

describe.runIf(HAS_CHROMIUM).each(STORE_KINDS)('finding runs and acting on many in Chromium on $name', (kind) => {
  const cleanups: (() => unknown)[] = [];
  let browser: Browser;
  let page: Page;
  let seen: PageWatch;
  let url = '';
  let operator: Operator;
  let seeded: Seeded;
  let keyed = '';
  let targets: string[] = [];
  let store: Store;

  // One seeded store and dashboard for the file: each test acts on runs of its own (the keyed invoices, the sweep,
  // the failed notices, a schedule of its own); a fresh browser context per test.
  beforeAll(async () => {
    browser = await launchChromium();
    store = await kind.open(cleanups);
    seeded = await seedRuns(store);
    const queue = createQueue({ store, logger: false, runtime: { mode: 'producer' } });
    cleanups.push(() => queue.close());
    const invoice = queue.define({ name: 'invoice', version: '1' });
    const sweep = queue.define({ name: 'sweep', version: '1' });
    await queue.ready();
    operator = queue.operator;
    keyed = (await invoice.start({ query: { n: 42 }, idempotencyKey: 'invoice-2026-0042' })).runId;
    await invoice.start({ query: { n: 43 }, idempotencyKey: 'invoice-2026-0043' });
    const many = await sweep.startMany(Array.from({ length: 120 }, (_, i) => ({ query: { i } })));
    targets = many.map((r) => r.runId);
    url = await servedDashboard(store, cleanups);
  });
  afterAll(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
    await browser.close();
  });
  let context: BrowserContext;
  beforeEach(async () => {
    ({ context, page, seen } = await freshPage(browser));
  });
  afterEach(async () => {
    await context.close();
    expect(seen.errors).toEqual([]);
  });

  const shownIds = () =>
    page.locator('#runs tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));

  it('finds a run by its idempotency key and by its id', async () => {
    await page.goto(`${url}runs`);
    await page.fill('#search', 'invoice-2026-0042');
    await page.click('#filter button');
    await page.waitForURL(/q=invoice-2026-0042/);
    expect(await shownIds()).toEqual([keyed]);
    await page.fill('#search', seeded.failed);
    await page.click('#filter button');
    await page.waitForURL(new RegExp(`q=${seeded.failed}`));
    expect(await shownIds()).toEqual([seeded.failed]);
    await page.fill('#search', 'no-such-key');
    await page.click('#filter button');
    await page.locator('#no-runs').waitFor();
  });

  it('lists failed runs with their error code, message and reason, and says how many match', async () => {
    await page.goto(`${url}runs?status=failed`);
    const listed = await operator.runs.list({ status: 'failed' });
    expect(await shownIds()).toEqual(listed.items.map((r) => r.runId));
    for (const run of listed.items) {
      const row = page.locator(`tr[data-run-id="${run.runId}"]`);
      expect(await row.locator('.error-code').innerText()).toBe(run.error?.code);
      expect(await row.locator('.error-message').innerText()).toBe(run.error?.message);
      expect(await row.innerText()).toContain(run.reason);
    }
    const stats = await operator.stats();
    expect(await page.locator('#total [data-total]').getAttribute('data-total')).toBe(String(stats.byStatus.failed));
    await page.goto(`${url}runs?status=waiting`);
    expect(await page.locator(`tr[data-run-id="${seeded.waiting}"] td.detail`).innerText()).toMatch(/^event /);
  });

  it('cancels all 120 runs a filter matches after asking, one command each, and reports them', async () => {
    await page.goto(`${url}runs?task=sweep&status=pending`);
    expect(await page.locator('#total [data-total]').getAttribute('data-total')).toBe('120');
    await page.check('#scope-all');
    await page.selectOption('#bulk-verb', 'cancel');
    await page.fill('#bulk-reason', 'the sweep was started twice');
    await page.click('#bulk-apply');
    expect(await page.locator('#confirm-text strong').innerText()).toBe('120');
    expect(await page.locator('#confirm-cancel').getAttribute('class')).toBe('danger');
    const confirmed = await page.locator('#confirm').evaluate((form) => {
      // The browser's FormData, reached through globalThis: the test's TypeScript has no DOM library.
      const { FormData } = globalThis as unknown as { FormData: new (form: unknown) => Iterable<[string, string]> };
      return new URLSearchParams([...new FormData(form)]).toString();
    });
    await page.click('#confirm-cancel');
    expect(await page.locator('#notice').innerText()).toBe('cancel: 120 applied, 0 no-ops, 0 conflicts (of 120).');
    const stats = await operator.stats({ taskName: 'sweep' });
    expect(stats.byStatus.cancelled).toBe(120);
    for (const runId of [targets[0], targets[119]] as string[]) {
      const stop = (await operator.runs.history(runId)).at(-1);
      expect(stop).toMatchObject({ reason: 'OPERATOR_STOP', to: 'cancelled' });
    }
    // Posting the same confirmed form again applies nothing twice: each command's receipt answers as before.
    const again = await page.request.post(`${url}runs/bulk`, {
      data: confirmed,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(url).origin },
    });
    expect(await again.text()).toContain('cancel: 120 applied, 0 no-ops, 0 conflicts (of 120).');
    const history = await operator.runs.history(targets[0] as string);
    expect(history.filter((entry) => entry.reason === 'OPERATOR_STOP')).toHaveLength(1);
  });

  it('retries the selected runs only, and counts a stale one as a conflict', async () => {
    await page.goto(`${url}runs?status=failed`);
    const failed = (await operator.runs.list({ status: 'failed' })).items;
    expect(failed.length).toBeGreaterThanOrEqual(2);
    const [first, second] = failed as [(typeof failed)[0], (typeof failed)[0]];
    await page.check(`tr[data-run-id="${first.runId}"] input[type=checkbox]`);
    await page.check(`tr[data-run-id="${second.runId}"] input[type=checkbox]`);
    await operator.runs.retry({
      runId: second.runId,
      expectedRevision: second.revision,
      reason: 'elsewhere',
      commandId: 'x1',
    });
    await page.selectOption('#bulk-verb', 'retry');
    await page.fill('#bulk-reason', 'provider is back');
    await page.click('#bulk-apply');
    expect(await page.locator('#notice').innerText()).toBe('retry: 1 applied, 0 no-ops, 1 conflicts (of 2).');
    expect((await operator.runs.get(first.runId))?.status).toBe('pending');
  });

  it("opens a task's page from the overview: its state and pause form, its schedules and its recent failures", async () => {
    // A task that still has failed runs (the retry test sent two of them back).
    const name = (await operator.runs.list({ status: 'failed' })).items[0]?.task.name as string;
    expect(name).toBeDefined();
    await page.goto(url);
    await page.locator(`#tasks tr[data-task-name="${name}"] a`).click();
    await page.waitForURL(new RegExp(`/tasks/${name}$`));
    expect(await page.locator('dd[data-field="state"]').innerText()).toBe('active');
    const failed = await operator.runs.list({ taskName: name, status: 'failed', limit: 10 });
    const shown = await page
      .locator('#recent-failures tr[data-run-id]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    expect(shown).toEqual(failed.items.map((r) => r.runId));
    expect(await page.locator('#recent-failures .error-message').first().innerText()).toBe(
      failed.items[0]?.error?.message,
    );
    await page.fill('form.action[data-verb="pause"] input[name="reason"]', 'provider outage');
    await page.click('form.action[data-verb="pause"] button');
    await page.waitForURL(/notice=pause/);
    expect((await operator.tasks.list()).find((t) => t.name === name)?.paused).toBe(true);
    const missing = await page.request.get(`${url}tasks/no-such-task`);
    expect(missing.status()).toBe(404);
  });

  it("says plainly when a schedule's next slot is past because no consumer fires it", async () => {
    // A producer whose clock stood three hours back made this schedule: its next slot is long past, and no consumer runs.
    const then = createQueue({
      store,
      logger: false,
      runtime: { mode: 'producer' },
      clock: { now: () => Date.now() - 3 * 3_600_000 },
    });
    cleanups.push(() => then.close());
    const late = then.define({ name: 'ingest', version: '1' });
    await then.ready();
    await late.schedule('late-ingest', { cron: '0 * * * *', query: { file: 'late.csv' } });
    await page.goto(`${url}schedules`);
    expect(await page.locator('tr[data-schedule-id="late-ingest"] [data-overdue]').innerText()).toBe(
      'past: no consumer is running to fire it',
    );
    expect(await page.locator(`tr[data-schedule-id="${seeded.schedule}"] [data-overdue]`).count()).toBe(0);
    await page.goto(`${url}tasks/ingest`);
    const listed = await page
      .locator('#task-schedules tr[data-schedule-id]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-schedule-id')).sort());
    expect(listed).toEqual(['hourly-ingest', 'late-ingest']);
  });

  it("runs a schedule now from its row, opens the new run, and lists it among the schedule's runs", async () => {
    const id = seeded.schedule;
    await page.goto(`${url}schedules`);
    const row = page.locator(`tr[data-schedule-id="${id}"]`);
    await row.locator('form.action[data-verb="run now"] input[name="reason"]').fill('backfill the hour');
    await row.locator('form.action[data-verb="run now"] button').click();
    await page.waitForURL(/\/runs\/[0-9a-f]{32}\?notice=run-now/);
    const runId = /runs\/([0-9a-f]{32})/.exec(page.url())?.[1] as string;
    expect(await page.locator('#notice').innerText()).toBe('run now: this run was started.');
    expect((await operator.runs.get(runId))?.trigger).toMatchObject({ schedule: id });
    expect((await operator.runs.history(runId))[0]).toMatchObject({
      actor: 'operator',
      detail: { reason: 'backfill the hour' },
    });
    await page.goto(`${url}schedules`);
    await page.locator(`tr[data-schedule-id="${id}"] a.schedule-runs`).click();
    await page.waitForURL(/schedule=/);
    const listed = await page
      .locator('#runs tr[data-run-id]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    expect(listed).toEqual([runId]);
    expect(await page.locator('#schedule-filter').innerText()).toContain(id);
  });
});
