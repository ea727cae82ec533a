import { existsSync } from 'node:fs';
import type { Store } from '@docket/core';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { createDashboard } from '../src/index.js';
import { serveDashboard } from '../src/node.js';

/** Where the browser tests find Chromium: `DOCKET_CHROMIUM`, else Debian's package. */
export const CHROMIUM = process.env.DOCKET_CHROMIUM ?? '/usr/bin/chromium';

/** Whether this machine has the Chromium the browser tests drive (CI installs it; see `.ci/run`). */
export const HAS_CHROMIUM = existsSync(CHROMIUM);

/** Headless Chromium with the flags a closed network needs (no background fetches, no sync, no updates). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** What a page did that it never should: dialogs opened (script ran) and console errors (a CSP refusal, a 404). */
export interface PageWatch {
  dialogs: string[];
  errors: string[];
}

/** Records every dialog (dismissing it) and every console error of a page. */
export function watch(page: Page): PageWatch {
  const seen: PageWatch = { dialogs: [], errors: [] };
  page.on('dialog', (dialog) => {
    seen.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('console', (message) => {
    if (message.type() === 'error') seen.errors.push(message.text());
  });
  page.on('pageerror', (error) => seen.errors.push(error.message));
  return seen;
}

/** A fresh browser context and page, its dialogs and console errors watched (`watch`). */
export async function freshPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; seen: PageWatch }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  return { context, page, seen: watch(page) };
}

/** Serves a dashboard on `store` on a loopback port, both closed by `cleanups`; answers its URL. */
export async function servedDashboard(store: Store, cleanups: (() => unknown)[]): Promise<string> {
  const dashboard = createDashboard({ store });
  cleanups.push(() => dashboard.close());
  const served = await serveDashboard(dashboard, { port: 0 });
  cleanups.push(() => served.close());
  return served.url;
}
