import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueue, NonRetryableError, type Queue, type Store } from '@docket/core';
import { waitFor, waitForStatus } from '@docket/core/testing';
import { postgresStore } from '@docket/store-postgres';
import { sqliteStore } from '@docket/store-sqlite';
import { context, DiagLogLevel, diag, type MeterProvider, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { otelTelemetry } from '../src/index.js';
import { inMemorySdk } from './sdk.js';

const DATABASE_URL = process.env.DOCKET_TEST_DATABASE_URL;

/** The stores the spans are checked on: a SQLite file, and the PostgreSQL server when one is given. */
const STORES: { name: string; open: (cleanups: (() => unknown)[]) => Store }[] = [
  {
    name: 'SQLite',
    open(cleanups) {
      const dir = mkdtempSync(join(tmpdir(), 'docket-otel-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      return sqliteStore({ filename: join(dir, 'docket.sqlite') });
    },
  },
  ...(DATABASE_URL === undefined
    ? []
    : [
        {
          name: 'PostgreSQL',
          open(cleanups: (() => unknown)[]) {
            const schema = `otel_${randomBytes(6).toString('hex')}`;
            cleanups.push(async () => {
              const client = new pg.Client({ connectionString: DATABASE_URL });
              await client.connect();
              await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
              await client.end();
            });
            return postgresStore({ connectionString: DATABASE_URL, schema });
          },
        },
      ]),
];

describe.each(STORES)('otelTelemetry with the SDK and its in-memory exporters on $name', (store) => {
  const cleanups: (() => unknown)[] = [];
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterAll(() => context.disable());
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  /** A queue on a fresh store with `otelTelemetry` on the given SDK, closed after the test; no task defined yet. */
  function tracedQueue(sdk: ReturnType<typeof inMemorySdk>): Queue {
    const queue: Queue = createQueue({
      store: store.open(cleanups),
      protocol: { pollMs: 10 },
      logger: false,
      telemetry: otelTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider }),
    });
    cleanups.push(() => queue.close());
    return queue;
  }

  /** `tracedQueue` with the `traced` task, ready. */
  async function openQueue(sdk: ReturnType<typeof inMemorySdk>) {
    const queue = tracedQueue(sdk);
    const appTracer = sdk.tracerProvider.getTracer('app');
    const task = queue.define<{ pages: number; fail?: boolean }, { page: number }>(
      { name: 'traced', version: '3' },
      {
        execute(ctx) {
          appTracer.startSpan('app.work').end();
          if (ctx.query.fail) throw new NonRetryableError('the model refused');
          const page = (ctx.state?.page ?? 0) + 1;
          return page >= ctx.query.pages ? ctx.end() : ctx.next({ page });
        },
      },
    );
    await queue.ready();
    return { queue, task };
  }

  it('makes a start span per start and a page span per page, linked to it, with the handler inside', async () => {
    const sdk = inMemorySdk();
    cleanups.push(() => sdk.shutdown());
    const { task } = await openQueue(sdk);
    const { runId } = await task.start({ query: { pages: 2 } });
    await waitForStatus(task, runId, 'success');
    await waitFor(() => sdk.spans('docket.page').length === 2, 'the second page span');
    const [start] = sdk.spans('docket.start');
    expect(start?.kind).toBe(SpanKind.PRODUCER);
    expect(start?.attributes).toMatchObject({
      'docket.task.name': 'traced',
      'docket.task.version': '3',
      'docket.count': 1,
      'docket.created': 1,
    });
    const pages = sdk.spans('docket.page');
    expect(pages.map((span) => span.attributes['docket.page'])).toEqual([1, 2]);
    for (const page of pages) {
      expect(page.kind).toBe(SpanKind.CONSUMER);
      expect(page.attributes).toMatchObject({
        'docket.run_id': runId,
        'docket.task.name': 'traced',
        'docket.task.version': '3',
        'docket.attempt': 1,
      });
      expect(page.status).toEqual({ code: SpanStatusCode.UNSET });
      expect(page.links.map((link) => link.context)).toMatchObject([
        { traceId: start?.spanContext().traceId, spanId: start?.spanContext().spanId },
      ]);
    }
    expect(pages.map((page) => page.attributes['docket.run.status'])).toEqual(['pending', 'success']);
    // The handler ran in its page span's context: the application's span is the page span's child.
    const work = sdk.spans('app.work');
    expect(work.map((span) => span.parentSpanContext?.spanId)).toEqual(pages.map((p) => p.spanContext().spanId));
  });

  it("links a child run's page span to the page span of the parent page that started it", async () => {
    const sdk = inMemorySdk();
    cleanups.push(() => sdk.shutdown());
    const queue = tracedQueue(sdk);
    const leaf = queue.define({ name: 'leaf', version: '1' }, { execute: (ctx) => ctx.end() });
    const fan = queue.define(
      { name: 'fan', version: '1' },
      {
        execute: (ctx) =>
          ctx.page === 1
            ? ctx.next(null, {
                children: [
                  { task: leaf, query: 1 },
                  { task: leaf, query: 2 },
                ],
              })
            : ctx.end(),
      },
    );
    await queue.ready();
    const { runId } = await fan.start({ query: null });
    await waitForStatus(fan, runId, 'success');
    await waitFor(() => sdk.spans('docket.page').length === 4, 'the parent and child page spans');
    const pages = sdk.spans('docket.page');
    const parentFirst = pages.find((p) => p.attributes['docket.run_id'] === runId && p.attributes['docket.page'] === 1);
    const children = pages.filter((p) => p.attributes['docket.task.name'] === 'leaf');
    expect(children).toHaveLength(2);
    for (const child of children) {
      expect(child.links.map((link) => link.context.spanId)).toEqual([parentFirst?.spanContext().spanId]);
    }
  });

  it('gives a failed page an error status, and counts the four metrics', async () => {
    const sdk = inMemorySdk();
    cleanups.push(() => sdk.shutdown());
    const { task } = await openQueue(sdk);
    const [failed, ok] = await task.startMany([{ query: { pages: 1, fail: true } }, { query: { pages: 3 } }]);
    await waitForStatus(task, failed?.runId as string, 'failed');
    await waitForStatus(task, ok?.runId as string, 'success');
    // A page's span and metrics end once its settle's write has resolved, which can be just after the read above.
    await waitFor(() => sdk.spans('docket.page').length === 4, 'the fourth page span');
    const starts = sdk.spans('docket.start');
    expect(starts.map((span) => span.attributes)).toMatchObject([{ 'docket.count': 2, 'docket.created': 2 }]);
    const failedPage = sdk.spans('docket.page').find((span) => span.attributes['docket.run_id'] === failed?.runId);
    expect(failedPage?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'the model refused' });
    expect(failedPage?.attributes).toMatchObject({ 'docket.run.status': 'failed', 'docket.reason': 'NON_RETRYABLE' });
    const metrics = await sdk.metrics();
    expect(metrics.get('docket.runs.started')?.points).toEqual([
      { attributes: { 'docket.task.name': 'traced', 'docket.task.version': '3' }, value: 2 },
    ]);
    const settled = metrics.get('docket.runs.settled')?.points ?? [];
    expect(settled.map((p) => [p.attributes['docket.run.status'], p.value]).sort()).toEqual([
      ['failed', 1],
      ['success', 1],
    ]);
    const count = (name: string) =>
      (metrics.get(name)?.points ?? []).reduce((n, p) => n + (p.value as { count: number }).count, 0);
    expect(count('docket.page.duration')).toBe(4);
    expect(count('docket.run.queue_time')).toBe(4);
  });

  it('ends a start span with an error status when the start is refused', async () => {
    const sdk = inMemorySdk();
    cleanups.push(() => sdk.shutdown());
    const { task } = await openQueue(sdk);
    await expect(task.start({ query: { pages: 1 }, priority: 5000 })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    const [start] = sdk.spans('docket.start');
    expect(start?.status.code).toBe(SpanStatusCode.ERROR);
    expect(start?.events.map((event) => event.name)).toEqual(['exception']);
    expect((await sdk.metrics()).get('docket.runs.started')?.points ?? []).toEqual([]);
  });
});

describe('otelTelemetry without a registered SDK', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  it('without a registered SDK runs as before and stores no trace context', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docket-otel-noop-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'docket.sqlite');
    const queue = createQueue({
      store: sqliteStore({ filename: file }),
      protocol: { pollMs: 10 },
      logger: false,
      telemetry: otelTelemetry(),
    });
    cleanups.push(() => queue.close());
    const task = queue.define({ name: 'untraced', version: '1' }, { execute: (ctx) => ctx.end() });
    await queue.ready();
    const { runId } = await task.start({ query: null });
    await waitForStatus(task, runId, 'success');
    const db = new Database(file, { readonly: true });
    cleanups.push(() => db.close());
    expect(db.prepare('SELECT trace_parent FROM docket_runs WHERE run_id = ?').get(runId)).toEqual({
      trace_parent: null,
    });
  });
});

describe('otelTelemetry and a global SDK registered after the queue was created', () => {
  afterEach(() => trace.disable());

  it('answers inactive until a tracer provider is registered, then records the next page span', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docket-otel-late-'));
    const telemetry = otelTelemetry();
    const queue = createQueue({
      store: sqliteStore({ filename: join(dir, 'docket.sqlite') }),
      protocol: { pollMs: 10 },
      logger: false,
      telemetry,
    });
    try {
      const task = queue.define({ name: 'late', version: '1' }, { execute: (ctx) => ctx.end() });
      await queue.ready();
      expect(telemetry.tracer.active?.()).toBe(false);
      const first = await task.start({ query: null });
      await waitForStatus(task, first.runId, 'success');
      const sdk = inMemorySdk();
      expect(trace.setGlobalTracerProvider(sdk.tracerProvider)).toBe(true);
      expect(telemetry.tracer.active?.()).toBe(true);
      const second = await task.start({ query: null });
      await waitForStatus(task, second.runId, 'success');
      const pages = sdk.spans('docket.page').map((span) => span.attributes['docket.run_id']);
      expect(pages).toEqual([second.runId]);
      expect(sdk.spans('docket.start')).toHaveLength(1);
    } finally {
      await queue.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers active for a meter provider given to it, whatever the global tracer provider', () => {
    const sdk = inMemorySdk();
    expect(otelTelemetry({ meterProvider: sdk.meterProvider }).tracer.active?.()).toBe(true);
    expect(otelTelemetry({ tracerProvider: sdk.tracerProvider }).tracer.active?.()).toBe(true);
  });
});

describe('otelTelemetry.settled', () => {
  it('counts every run that settles in one stretch of synchronous work, by task and status', async () => {
    const sdk = inMemorySdk();
    const { tracer } = otelTelemetry(sdk);
    const settle = (name: string, status: 'success' | 'failed') =>
      tracer.settled?.({ namespace: 'default', runId: 'r', task: { name, version: '1' }, status, reason: 'COMPLETED' });
    for (let i = 0; i < 5; i++) settle('a', 'success');
    settle('a', 'failed');
    settle('b', 'success');
    await Promise.resolve();
    settle('a', 'success');
    const points = (await sdk.metrics()).get('docket.runs.settled')?.points ?? [];
    await sdk.shutdown();
    const counted = points.map((p) => [p.attributes['docket.task.name'], p.attributes['docket.run.status'], p.value]);
    expect(counted.sort()).toEqual([
      ['a', 'failed', 1],
      ['a', 'success', 6],
      ['b', 'success', 1],
    ]);
  });

  it('reports a counter that throws to the diag logger and keeps counting', async () => {
    const errors: unknown[][] = [];
    const logger = { error: (...args: unknown[]) => errors.push(args), warn() {}, info() {}, debug() {}, verbose() {} };
    diag.setLogger(logger, DiagLogLevel.ERROR);
    let calls = 0;
    const counter = {
      add() {
        calls += 1;
        if (calls === 1) throw new Error('exporter gone');
      },
    };
    const meter = { createCounter: () => counter, createHistogram: () => ({ record() {} }) };
    const { tracer } = otelTelemetry({ meterProvider: { getMeter: () => meter } as unknown as MeterProvider });
    try {
      const info = {
        namespace: 'default',
        runId: 'r',
        task: { name: 'a', version: '1' },
        reason: 'COMPLETED' as const,
      };
      tracer.settled?.({ ...info, status: 'success' as const });
      await Promise.resolve();
      tracer.settled?.({ ...info, status: 'success' as const });
      await Promise.resolve();
    } finally {
      diag.disable();
    }
    expect(calls).toBe(2);
    expect(errors).toEqual([
      ['docket.runs.settled: the counter threw', expect.objectContaining({ message: 'exporter gone' })],
    ]);
  });
});
