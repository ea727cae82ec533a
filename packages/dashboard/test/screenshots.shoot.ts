import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Clock, createQueue, type Store } from '@docket/core';
import { it } from 'vitest';
import { createDashboard } from '../src/index.js';
import { serveDashboard } from '../src/node.js';
import { launchChromium } from './browser.js';
import { seedRuns } from './seed.js';
import { STORE_KINDS } from './stores.js';

const OUT = fileURLToPath(new URL('../../../docs/dashboard/', import.meta.url));

/** An hour of traffic for the chart: a few runs settled in each minute, the clock moved back by the minute. */
async function seedHour(store: Store): Promise<void> {
  let offset = 59 * 60_000;
  const clock: Clock = { now: () => Date.now() - offset };
  const queue = createQueue({ store, clock, logger: false, protocol: { pollMs: 5 } });
  const sync = queue.define<{ shard: number }, null>({ name: 'crm-sync', version: '3' }, { execute: (c) => c.end() });
  await queue.ready();
  for (let minute = 0; minute < 60; minute++, offset -= 60_000) {
    const n = 3 + Math.round(6 + 5 * Math.sin(minute / 6) + (minute % 7));
    const started = await sync.startMany(Array.from({ length: n }, (_, shard) => ({ query: { shard } })));
    for (const { runId } of started) while ((await sync.get(runId))?.status !== 'success') await sleep(2);
  }
  await queue.close();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('renders each page of the dashboard to docs/dashboard/', async () => {
  mkdirSync(OUT, { recursive: true });
  const cleanups: (() => unknown)[] = [];
  const store = (await STORE_KINDS[0]?.open(cleanups)) as Store;
  await seedHour(store);
  const seeded = await seedRuns(store);
  const dashboard = createDashboard({ store });
  const served = await serveDashboard(dashboard, { port: 0 });
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const pages: [string, string][] = [
    ['overview', ''],
    ['runs', 'runs'],
    ['run', `runs/${seeded.failed}`],
    ['dead-letters', 'dead-letters'],
    ['schedules', 'schedules'],
    ['task', 'tasks/ingest'],
    ['failed-runs', 'runs?status=failed'],
  ];
  for (const [name, path] of pages) {
    await page.goto(`${served.url}${path}`);
    await page.screenshot({ path: `${OUT}${name}.png`, fullPage: name === 'run' });
  }
  await browser.close();
  await served.close();
  await dashboard.close();
  for (const fn of cleanups.reverse()) await fn();
});
