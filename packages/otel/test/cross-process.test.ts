import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue } from '@docket/core';
import { waitFor, waitForStatus } from '@docket/core/testing';
import { sqliteStore } from '@docket/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { otelTelemetry } from '../src/index.js';
import { inMemorySdk } from './sdk.js';

/**
 * A producer in its own process: starts one run on the SQLite file with `otelTelemetry` on its own SDK, closes, and
 * prints the run id and its start span's ids.
 */
const PRODUCER = `
import { createQueue } from '@docket/core';
import { sqliteStore } from '@docket/store-sqlite';
import { otelTelemetry } from '@docket/otel';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const queue = createQueue({
  store: sqliteStore({ filename: process.argv[1] }),
  runtime: { mode: 'producer' },
  telemetry: otelTelemetry({ tracerProvider }),
});
const task = queue.define({ name: 'crossing', version: '1' });
await queue.ready();
const { runId } = await task.start({ query: 'from another process' });
await queue.close();
const [span] = exporter.getFinishedSpans();
process.stdout.write(JSON.stringify({ runId, traceId: span.spanContext().traceId, spanId: span.spanContext().spanId }));
`;

/** Runs the producer script in a new Node.js process and answers what it printed. */
function produceIn(file: string): Promise<{ runId: string; traceId: string; spanId: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', PRODUCER, file], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`producer exited ${code}`)))),
  );
}

describe('a run started in one process and executed in another', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });

  it('links its page span to the start span of the producer process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'docket-otel-cross-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'docket.sqlite');
    const produced = await produceIn(file);
    const sdk = inMemorySdk();
    cleanups.push(() => sdk.shutdown());
    const consumer = createQueue({
      store: sqliteStore({ filename: file }),
      protocol: { pollMs: 10 },
      logger: false,
      telemetry: otelTelemetry({ tracerProvider: sdk.tracerProvider, meterProvider: sdk.meterProvider }),
    });
    cleanups.push(() => consumer.close());
    const task = consumer.define<string>({ name: 'crossing', version: '1' }, { execute: (ctx) => ctx.end() });
    await consumer.ready();
    await waitForStatus(task, produced.runId, 'success');
    await waitFor(() => sdk.spans('docket.page').length === 1, 'the page span');
    const [page] = sdk.spans('docket.page');
    expect(page?.attributes['docket.run_id']).toBe(produced.runId);
    expect(page?.links.map((link) => link.context)).toMatchObject([
      { traceId: produced.traceId, spanId: produced.spanId, isRemote: true },
    ]);
    // The page span begins a trace of its own: it is linked to the start, not its child.
    expect(page?.spanContext().traceId).not.toBe(produced.traceId);
  });
});
