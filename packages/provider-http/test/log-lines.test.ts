import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createQueue, type Logger } from '@docket/core';
import { memoryStore, waitForStatus } from '@docket/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpProvider } from '../src/index.js';

const KEY = 'sk-live-log-scan-0123456789SECRET';
const PAYLOAD = 'customer-ledger-row-4711';

describe('the log lines of runs whose model calls fail', () => {
  let server: Server;
  let baseUrl: string;
  let requests = 0;
  beforeAll(async () => {
    // Answers, in turn: 401 echoing every header (the key among them), 500, then a body that is not JSON.
    server = createServer((req, res) => {
      const turn = requests++ % 3;
      if (turn === 0) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'unauthorized', headers: req.headers }));
      } else if (turn === 1) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'overloaded' }));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('not json');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('hold neither the key nor the query, with every level on', async () => {
    const lines: string[] = [];
    const keep = (level: string) => (fields: object, message: string) =>
      lines.push(JSON.stringify({ level, ...fields, message }));
    const logger: Logger = { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
    const providers = [
      httpProvider({ kind: 'openai-compatible', baseUrl, model: 'm', headers: { authorization: `Bearer ${KEY}` } }),
      httpProvider({ kind: 'openai-compatible', baseUrl, model: 'm', apiKey: KEY }),
    ];
    const queue = createQueue({
      store: memoryStore(),
      logger,
      protocol: { pollMs: 10 },
      defaults: { policy: { attempts: 3, backoff: { baseMs: 1, maxMs: 2 } }, callbackPolicy: { attempts: 1 } },
    });
    const task = queue.define<{ note: string; provider: number }>(
      { name: 'notice', version: '1', events: ['failure'] },
      {
        async execute(ctx) {
          const provider = providers[ctx.query.provider] as (typeof providers)[number];
          await ctx.callModel(provider, { messages: [{ role: 'user', content: ctx.query.note }] });
          return ctx.end();
        },
        onFailure: () => {
          throw new Error('webhook refused');
        },
      },
    );
    await queue.ready();
    try {
      for (const provider of [0, 1]) {
        const { runId } = await task.start({ query: { note: PAYLOAD, provider } });
        await waitForStatus(task, runId, 'failed');
      }
    } finally {
      await queue.close();
    }
    expect(lines.some((line) => line.includes('"run failed"'))).toBe(true);
    expect(lines.some((line) => line.includes('callback dead-lettered'))).toBe(true);
    for (const line of lines) {
      expect(line).not.toContain(KEY);
      expect(line).not.toContain(PAYLOAD);
    }
  });
});
