import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { isDocketError } from '@docket/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpProvider, loadProviders, parseDotenv } from '../src/index.js';

const KEY = 'sk-live-0123456789abcdefSECRET';

/** Everything an error would show: its message, details, cause and the way Node prints it. */
const shown = (error: unknown) =>
  `${(error as Error).message} ${JSON.stringify(error)} ${inspect(error, { depth: 5 })}`;

describe('a key in the common wrong places is never printed', () => {
  let server: Server;
  let baseUrl: string;
  beforeAll(async () => {
    // A server that answers 400 and echoes every request header back in its body, as some gateways do.
    server = createServer((req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'bad request', headers: req.headers }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('pasted into apiKeyEnv of docket.yaml', () => {
    const dir = mkdtempSync(join(tmpdir(), 'docket-secrets-'));
    try {
      writeFileSync(
        join(dir, 'docket.yaml'),
        `providers:\n  main:\n    kind: openai-compatible\n    baseUrl: ${baseUrl}\n    model: m\n    apiKeyEnv: ${KEY}\n`,
      );
      const error = (() => {
        try {
          loadProviders({ cwd: dir, env: {} });
        } catch (e) {
          return e;
        }
      })();
      expect(isDocketError(error, 'PROVIDER_CONFIG_INVALID')).toBe(true);
      expect(shown(error)).toContain('apiKeyEnv');
      expect(shown(error)).not.toContain(KEY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sent in a custom header and echoed by the server into the error body', async () => {
    const provider = httpProvider({ kind: 'openai-compatible', baseUrl, model: 'm', headers: { 'x-api-key': KEY } });
    const error = await provider
      .generate({ messages: [{ role: 'user', content: 'hi' }], signal: new AbortController().signal })
      .catch((e: unknown) => e);
    expect(isDocketError(error, 'PROVIDER_HTTP_ERROR')).toBe(true);
    expect(JSON.stringify((error as { details?: unknown }).details)).toContain('x-api-key');
    expect(shown(error)).not.toContain(KEY);
  });

  it('inside the baseUrl as user and password', async () => {
    const withCredentials = baseUrl.replace('http://', `http://user:${KEY}@`);
    const provider = httpProvider({ kind: 'openai-compatible', baseUrl: withCredentials, model: 'm' });
    expect(provider.baseUrl).not.toContain(KEY);
    const error = await provider
      .generate({ messages: [{ role: 'user', content: 'hi' }], signal: new AbortController().signal })
      .catch((e: unknown) => e);
    expect(isDocketError(error)).toBe(true);
    expect(shown(error)).not.toContain(KEY);
    const refused = (() => {
      try {
        httpProvider({ kind: 'openai-compatible', baseUrl: withCredentials, model: '' });
      } catch (e) {
        return e;
      }
    })();
    expect(isDocketError(refused, 'PROVIDER_CONFIG_INVALID')).toBe(true);
    expect(shown(refused)).not.toContain(KEY);
  });
});

describe('a key that comes back encoded, or sits in the query string', () => {
  let server: Server;
  let baseUrl: string;
  beforeAll(async () => {
    // A gateway that answers 400 and echoes the request's headers base64-encoded, and its URL.
    server = createServer((req, res) => {
      const echo = Buffer.from(JSON.stringify(req.headers)).toString('base64');
      const url = Buffer.from(req.url ?? '').toString('base64url');
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'bad request', echo, url }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Every base64 run of the error's body, decoded (standard and URL-safe alike). */
  const decodedEchoes = (error: unknown) => {
    const body = String((error as { details?: { body?: unknown } }).details?.body ?? '');
    const parsed = JSON.parse(body) as { echo: string; url: string };
    return [Buffer.from(parsed.echo, 'base64').toString('utf8'), Buffer.from(parsed.url, 'base64url').toString('utf8')];
  };

  it('is redacted from an upstream that echoes it base64-encoded', async () => {
    for (const prefix of ['', 'x', 'xy']) {
      const key = `${prefix}${KEY}`;
      const provider = httpProvider({ kind: 'openai-compatible', baseUrl, model: 'm', apiKey: key });
      const error = await provider
        .generate({ messages: [{ role: 'user', content: 'hi' }], signal: new AbortController().signal })
        .catch((e: unknown) => e);
      expect(isDocketError(error, 'PROVIDER_HTTP_ERROR')).toBe(true);
      for (const decoded of decodedEchoes(error)) expect(decoded).not.toContain(KEY);
      expect(shown(error)).not.toContain(KEY);
    }
  });

  it("never shows a key in baseUrl's query string: not in the provider, not in its errors", async () => {
    const provider = httpProvider({ kind: 'gemini', baseUrl: `${baseUrl}?key=${KEY}`, model: 'm' });
    expect(JSON.stringify(provider)).not.toContain(KEY);
    expect(inspect(provider)).not.toContain(KEY);
    expect(provider.baseUrl).not.toContain(KEY);
    const error = await provider
      .generate({ messages: [{ role: 'user', content: 'hi' }], signal: new AbortController().signal })
      .catch((e: unknown) => e);
    expect(isDocketError(error)).toBe(true);
    expect(shown(error)).not.toContain(KEY);
  });
});

describe('parseDotenv', () => {
  it('keeps a quoted value over several lines (a PEM key) whole', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\nkqhkiG9w0BAQEF\n-----END PRIVATE KEY-----';
    expect(parseDotenv(`A=1\nPEM="${pem}"\nB=2\n`)).toEqual({ A: '1', PEM: pem, B: '2' });
  });
});
