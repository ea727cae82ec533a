import { createQueue, NonRetryableError, type Store } from '@docket/core';
import { waitFor, waitForStatus } from '@docket/core/testing';

/** Text that would run as script or break out of an attribute if the dashboard did not escape it. */
export const HOSTILE = {
  script: '<script>alert("query")</script>',
  attribute: '"><img src=x onerror=alert("attr")>',
  error: '<img src=x onerror=alert("error")>',
};

/** What `seedRuns` made: the ids the tests open. */
export interface Seeded {
  succeeded: string[];
  failed: string;
  hostile: string;
  pending: string[];
  waiting: string;
  schedule: string;
  /** A run whose first page started three children, and those children in the order given. */
  parent: string;
  children: string[];
}

/**
 * Fills a store the way an application would: a worker settles five runs (one a failure whose failure callback
 * always fails, so it becomes a dead letter; one whose query and error hold HTML), then a producer leaves two runs
 * pending (their task has no worker), one waiting for an event, and an hourly schedule no consumer fires. A digest
 * starts three summaries as children (one fails) and ends once they settled.
 */
export async function seedRuns(store: Store): Promise<Seeded> {
  const worker = createQueue({
    store,
    logger: false,
    protocol: { pollMs: 10 },
    defaults: { callbackPolicy: { attempts: 1 } },
  });
  const notice = worker.define<{ topic: string; title?: string; outcome?: 'fail' }, null>(
    { name: 'release-notice', version: '1', events: ['failure'] },
    {
      execute(ctx) {
        if (ctx.query.outcome === 'fail') {
          throw new NonRetryableError(ctx.query.title ? HOSTILE.error : 'the model refused');
        }
        return ctx.end();
      },
      onFailure() {
        throw new Error('the release webhook answered 500');
      },
    },
  );
  const batch = worker.define<{ day: number }, null>(
    { name: 'nightly-batch', version: '2' },
    { execute: (c) => c.end() },
  );
  const summary = worker.define<{ doc: number }, null>(
    { name: 'summary', version: '1' },
    {
      execute(ctx) {
        if (ctx.query.doc === 2) throw new NonRetryableError('the document is empty');
        return ctx.end();
      },
    },
  );
  const digest = worker.define<null, null>(
    { name: 'digest', version: '1' },
    {
      execute: (ctx) =>
        ctx.page === 1
          ? ctx.next(null, { children: [0, 1, 2].map((doc) => ({ task: summary, query: { doc } })) })
          : ctx.end(),
    },
  );
  await worker.ready();
  const parent = (await digest.start({ query: null })).runId;
  await waitForStatus(digest, parent, 'success');
  const { items } = await worker.operator.runs.list({ parentRunId: parent });
  const children = items.map((item) => item.runId).reverse();
  const succeeded = [];
  for (let day = 1; day <= 3; day++) succeeded.push((await batch.start({ query: { day } })).runId);
  const failed = (await notice.start({ query: { topic: 'v2.4', outcome: 'fail' } })).runId;
  const hostile = (await notice.start({ query: { topic: HOSTILE.script, title: HOSTILE.attribute, outcome: 'fail' } }))
    .runId;
  for (const runId of succeeded) await waitForStatus(batch, runId, 'success');
  for (const runId of [failed, hostile]) await waitForStatus(notice, runId, 'failed');
  await waitFor(async () => (await worker.operator.stats()).deadLetters === 2, 'both failure callbacks to dead-letter');
  await worker.close();
  const producer = createQueue({ store, logger: false, runtime: { mode: 'producer' } });
  const ingest = producer.define<{ file: string }, null>({ name: 'ingest', version: '1' });
  await producer.ready();
  const pending = [];
  for (const file of ['a.csv', 'b.csv']) pending.push((await ingest.start({ query: { file } })).runId);
  const waiting = (await ingest.start({ query: { file: 'c.csv' }, trigger: { event: 'upload.done' } })).runId;
  const schedule = 'hourly-ingest';
  await ingest.schedule(schedule, { cron: '0 * * * *', query: { file: 'hourly.csv' } });
  await producer.close();
  return { succeeded, failed, hostile, pending, waiting, schedule, parent, children };
}
