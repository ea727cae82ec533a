import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createQueue, type Operator } from '@docket/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freshPage, HAS_CHROMIUM, launchChromium, type PageWatch, servedDashboard } from './browser.js';
import { seedRuns } from './seed.js';
import { STORE_KINDS } from './stores.js';

/** The little of the browser's globals the page functions use. */
interface Browserish {
  document: {
    querySelector(selector: string): { textContent: string | null } | null;
    querySelectorAll(selector: string): { length: number };
  };
}

const START_RUN = fileURLToPath(new URL('./fixtures/start-run.mjs', import.meta.url));
const run = promisify(execFile);

describe.runIf(HAS_CHROMIUM).each(STORE_KINDS)('the live dashboard in Chromium on $name', (kind) => {
  const cleanups: (() => unknown)[] = [];
  let browser: Browser;
  let page: Page;
  let seen: PageWatch;
  let url = '';
  let operator: Operator;

  /** Starts `count` ingest runs from a process of its own. */
  const startElsewhere = (count: number) =>
    run(process.execPath, [START_RUN, ...kind.where(), 'ingest', String(count)]);
  /** The overview's count of pending runs of every task. */
  const pending = async () =>
    Number(await page.locator('#counts td[data-task="*"][data-status="pending"]').innerText());

  // One seeded store and dashboard for the file (each test compares counts with what it saw first); a fresh browser
  // context per test.
  beforeAll(async () => {
    browser = await launchChromium();
    const store = await kind.open(cleanups);
    await seedRuns(store);
    const queue = createQueue({ store, logger: false, runtime: { mode: 'producer' } });
    cleanups.push(() => queue.close());
    await queue.ready();
    operator = queue.operator;
    url = await servedDashboard(store, cleanups);
  });
  afterAll(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
    await browser.close();
  });
  let context: BrowserContext;
  beforeEach(async () => {
    ({ context, page, seen } = await freshPage(browser));
    await page.goto(url);
    await mark();
  });
  afterEach(async () => {
    await context.close();
    expect(seen.errors).toEqual([]);
  });

  /** Marks this document: a reload would lose the mark. */
  // Page functions run in the browser and are passed as functions (the dashboard's CSP refuses strings, as eval):
  // the test's TypeScript has no DOM library, so they reach the page through `globalThis`.
  const mark = () =>
    page.evaluate(() => {
      (globalThis as unknown as { marked: boolean }).marked = true;
    });
  const notReloaded = () => page.evaluate(() => (globalThis as unknown as { marked?: boolean }).marked === true);
  /** Waits until the overview's count of pending runs shows `n`. */
  const pendingShows = (n: number, timeout: number) =>
    page.waitForFunction(
      (expected) => {
        const doc = (globalThis as unknown as Browserish).document;
        return Number(doc.querySelector('#counts td[data-task="*"][data-status="pending"]')?.textContent) === expected;
      },
      n,
      { timeout, polling: 50 },
    );

  it('shows a run another process starts within two seconds, without a reload', async () => {
    const before = await pending();
    await startElsewhere(1);
    const started = Date.now();
    await pendingShows(before + 1, 2_000);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await notReloaded()).toBe(true);
    expect(await page.locator('#live-toggle').getAttribute('aria-pressed')).toBe('true');
  });

  it('stops refreshing when live is turned off, and catches up when it is turned on again', async () => {
    const before = await pending();
    await page.locator('#live-toggle').click();
    expect(await page.locator('#live-toggle').innerText()).toBe('Live: off');
    await startElsewhere(2);
    await page.waitForTimeout(2_500);
    expect(await pending()).toBe(before);
    await page.locator('#live-toggle').click();
    await pendingShows(before + 2, 3_000);
    expect(await notReloaded()).toBe(true);
  });

  it("updates the runs list and a run's timeline by themselves, and never under a reason being typed", async () => {
    await page.goto(`${url}runs?task=ingest`);
    const listed = await page.locator('tr[data-run-id]').count();
    await startElsewhere(1);
    const rowsShow = (n: number) =>
      (globalThis as unknown as Browserish).document.querySelectorAll('tr[data-run-id]').length === n;
    await page.waitForFunction(rowsShow, listed + 1, {
      timeout: 2_000,
      polling: 50,
    });
    const runId = (await page.locator('tr[data-run-id]').first().getAttribute('data-run-id')) as string;
    await page.goto(`${url}runs/${runId}`);
    await mark();
    const reason = page.locator('form.action[data-verb="cancel"] input[name="reason"]');
    await reason.fill('half typed');
    await operator.runs.cancel({ runId, expectedRevision: 1, reason: 'from the test', commandId: `live-${runId}` });
    await page.waitForTimeout(2_000);
    expect(await reason.inputValue()).toBe('half typed');
    expect(await page.locator('#history li[data-reason="OPERATOR_STOP"]').count()).toBe(0);
    await reason.fill('');
    await page.locator('h1').click();
    await page.locator('#history li[data-reason="OPERATOR_STOP"]').waitFor({ timeout: 2_500 });
    expect(await notReloaded()).toBe(true);
  });
});
