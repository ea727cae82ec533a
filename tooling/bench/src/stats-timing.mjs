// The `operator.stats()` and dashboard timings both benchmark sections share.
import { createDashboard } from '@docket/dashboard';

/** The median time of 101 `operator.stats()` calls on a ready queue, in ms rounded to the µs, after 10 to warm up. */
export async function medianStatsMs(queue) {
  for (let i = 0; i < 10; i++) await queue.operator.stats();
  const samples = [];
  for (let i = 0; i < 101; i++) {
    const t = performance.now();
    await queue.operator.stats();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return Math.round(samples[50] * 1000) / 1000;
}

/**
 * The median time of 51 requests of the dashboard's overview and of its runs page (newest 50), through its request
 * handler on a ready queue, in ms rounded to the µs, after 5 of each to warm up.
 */
export async function medianPagesMs(queue) {
  const dashboard = createDashboard({ queue });
  const result = {};
  // A search finds no run (a key lookup in each task); a filter asks for the last ten minutes' successes of a task.
  const recent = new Date(Date.now() - 600_000).toISOString().slice(0, 16);
  for (const [key, path] of [
    ['overviewMs', '/'],
    ['runsMs', '/runs'],
    ['searchMs', '/runs?q=no-such-key-0001'],
    ['filterMs', `/runs?task=noop&status=success&from=${recent}`],
  ]) {
    const get = async () => {
      const response = await dashboard(new Request(`http://127.0.0.1${path}`));
      if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
      await response.text();
    };
    for (let i = 0; i < 5; i++) await get();
    const samples = [];
    for (let i = 0; i < 51; i++) {
      const t = performance.now();
      await get();
      samples.push(performance.now() - t);
    }
    samples.sort((a, b) => a - b);
    result[key] = Math.round(samples[25] * 1000) / 1000;
  }
  await dashboard.close();
  return result;
}

/**
 * The median time of 51 reads of the changes feed's oldest 100 entries, in ms rounded to the µs, after 10; `null`
 * when the feed holds fewer than 100 (an empty store).
 */
export async function medianFeedMs(queue) {
  const read = () => queue.operator.changes({ limit: 100 });
  if ((await read()).items.length < 100) return null;
  for (let i = 0; i < 10; i++) await read();
  const samples = [];
  for (let i = 0; i < 51; i++) {
    const t = performance.now();
    const page = await read();
    samples.push(performance.now() - t);
    if (page.items.length !== 100) throw new Error(`a feed page held ${page.items.length} entries`);
  }
  samples.sort((a, b) => a - b);
  return Math.round(samples[25] * 1000) / 1000;
}

/** The two dashboard rows of a section: overview and runs page with the finished runs against the empty store. */
export function dashboardRows(add, prefix, measure, full, empty, baselineName) {
  add(
    `${prefix}dashboard overview ms (median of 51)`,
    measure,
    full.overviewMs,
    empty.overviewMs,
    baselineName,
    2,
    'lower',
  );
  add(`${prefix}dashboard runs page ms (median of 51)`, measure, full.runsMs, empty.runsMs, baselineName, 2, 'lower');
  add(
    `${prefix}dashboard runs search ms (median of 51)`,
    measure,
    full.searchMs,
    empty.searchMs,
    baselineName,
    2,
    'lower',
  );
  add(
    `${prefix}dashboard runs filter ms (median of 51)`,
    measure,
    full.filterMs,
    empty.filterMs,
    baselineName,
    2,
    'lower',
  );
}

/** The changes feed's row: a page of 100 with the finished runs' entries kept, against 1,000 runs' entries. */
export function feedRow(add, prefix, measure, full, small, storeWord) {
  add(
    `${prefix}operator.changes() page of 100 ms (median of 51)`,
    measure,
    full.feedMs,
    small.feedMs,
    `same, ${storeWord} of 1,000 finished runs (3,000 entries)`,
    2,
    'lower',
  );
}

/** The runs page with many finished runs against a store holding a single page's worth (the same 50 rows shown). */
export function runsPageAgainstOnePage(add, prefix, measure, full, onePage, storeWord) {
  add(
    `${prefix}dashboard runs page ms (median of 51)`,
    measure,
    full.runsMs,
    onePage.runsMs,
    `same, ${storeWord} of 1,000 finished (the same 50 rows shown)`,
    null,
    'lower',
  );
}
