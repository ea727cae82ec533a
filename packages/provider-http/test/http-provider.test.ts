import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { type DocketErrorCode, isDocketError } from '@docket/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpProvider, type ProviderKind } from '../src/index.js';
import { type LocalFailure, type LocalModel, startLocalModel } from '../src/testing/index.js';

const SECRET = 'sk-test-SECRET-do-not-leak-123456';
let local: LocalModel;

beforeAll(async () => {
  local = await startLocalModel({ slowMs: 3000 });
});
afterAll(async () => {
  await local.close();
});

function providerFor(kind: ProviderKind, extra: Partial<Parameters<typeof httpProvider>[0]> = {}) {
  const baseUrl =
    kind === 'gemini' ? local.geminiBaseUrl : kind === 'anthropic' ? local.anthropicBaseUrl : local.baseUrl;
  return httpProvider({ kind, baseUrl, model: 'local-test', apiKey: SECRET, timeoutMs: 1000, ...extra });
}

const releasePrompt = JSON.stringify({ id: 'REL-1', title: 'Docket 1.0', revision: 3, change: 'Adds event triggers.' });
const messages = [
  { role: 'system' as const, content: 'You write release notices as JSON.' },
  { role: 'user' as const, content: `Write the notice for this release: ${releasePrompt}` },
];

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isDocketError(error), `expected a DocketError, got ${String(error)}`).toBe(true);
  return error as Error & { code: DocketErrorCode; retryable: boolean; details?: Record<string, unknown> };
}

function assertNoSecret(value: unknown) {
  const seen = [
    inspect(value, { depth: 10, showHidden: true }),
    JSON.stringify(value),
    JSON.stringify((value as { details?: unknown })?.details ?? null),
    String((value as Error)?.message),
    String((value as Error)?.stack),
    String((value as { cause?: unknown })?.cause),
  ].join('\n');
  expect(seen).not.toContain(SECRET);
}

describe.each(['openai-compatible', 'anthropic', 'gemini'] as const)('httpProvider (%s) over real HTTP', (kind) => {
  it('answers with the notice JSON, a normal finish reason, usage and the model', async () => {
    const before = local.requestCount;
    const provider = providerFor(kind);
    const answer = await provider.generate({ messages, responseFormat: 'json', signal: new AbortController().signal });
    expect(JSON.parse(answer.text)).toEqual({
      releaseId: 'REL-1',
      revision: 3,
      title: 'Docket 1.0',
      body: 'Docket 1.0 (revision 3) is ready. Adds event triggers.',
    });
    expect(answer.finishReason).toBe('stop');
    expect(answer.usage?.inputTokens).toBeGreaterThan(0);
    expect(answer.model).toBe('local-test');
    expect(local.requestCount).toBe(before + 1);
    const sent = local.requests.at(-1)!;
    expect(sent.api).toBe(kind);
    assertNoSecret(answer);
    assertNoSecret(provider);
  });

  const cases: [LocalFailure, DocketErrorCode, boolean][] = [
    ['http500', 'PROVIDER_HTTP_ERROR', true],
    ['http429', 'PROVIDER_HTTP_ERROR', true],
    ['not-json', 'PROVIDER_INVALID_RESPONSE', false],
    ['bad-shape', 'PROVIDER_INVALID_RESPONSE', false],
    ['bad-content', 'PROVIDER_INVALID_RESPONSE', false],
    ['truncated', 'PROVIDER_TRUNCATED', false],
    ['slow', 'PROVIDER_TIMEOUT', true],
    ['reset', 'PROVIDER_HTTP_ERROR', true],
  ];
  it.each(cases)('turns %s into %s (retryable: %s) and never shows the key', async (mode, code, retryable) => {
    local.fail(mode, 1);
    // Only the slow answer (3 s) must outlast the timeout: the others answer at once, also on a loaded machine.
    const error = await failure(
      providerFor(kind, { timeoutMs: mode === 'slow' ? 300 : 5_000 }).generate({
        messages,
        responseFormat: 'json',
        signal: new AbortController().signal,
      }),
    );
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    if (mode === 'http429') expect(error.details).toMatchObject({ status: 429, retryAfterMs: 2000 });
    if (mode === 'http500') expect(error.details).toMatchObject({ status: 500 });
    if (mode === 'reset') expect(error.details).toMatchObject({ status: 0 });
    if (mode === 'truncated') expect(error.details).toMatchObject({ finishReason: 'length' });
    assertNoSecret(error);
    local.fail(null);
  });

  it('does not retry-flag client errors (400)', async () => {
    const provider = httpProvider({
      kind,
      baseUrl: `http://127.0.0.1:${local.port}/nowhere`,
      model: 'm',
      apiKey: SECRET,
    });
    const error = await failure(provider.generate({ messages, signal: new AbortController().signal }));
    expect(error).toMatchObject({ code: 'PROVIDER_HTTP_ERROR', retryable: false, details: { status: 404 } });
    assertNoSecret(error);
  });

  it('aborts the request at once when the caller signal aborts, and the server sees the connection close', async () => {
    local.fail('slow', 1);
    const closedBefore = local.abortedConnections;
    const controller = new AbortController();
    const started = Date.now();
    const pending = failure(providerFor(kind, { timeoutMs: 10_000 }).generate({ messages, signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    const error = await pending;
    expect(error.code).toBe('PROVIDER_ABORTED');
    expect(Date.now() - started).toBeLessThan(3000); // far below the 3 s slow answer: the request did not wait for it
    await expect.poll(() => local.abortedConnections, { timeout: 2000 }).toBeGreaterThan(closedBefore);
    local.fail(null);
  });
});

describe('httpProvider basics', () => {
  it('accepts a fenced ```json block when JSON was asked for', async () => {
    const server = await startLocalModel();
    try {
      // A bad-content answer is not JSON; the local model's normal answer wrapped in a fence must be accepted.
      const provider = httpProvider({ kind: 'openai-compatible', baseUrl: server.baseUrl, model: 'm' });
      const plain = await provider.generate({ messages, signal: new AbortController().signal });
      const fenced = `Here it is:\n\`\`\`json\n${plain.text}\n\`\`\``;
      const { extractJson } = await import('../src/index.js');
      expect(JSON.parse(extractJson(fenced) ?? 'null')).toEqual(JSON.parse(plain.text));
      expect(extractJson('no json here')).toBeNull();
    } finally {
      await server.close();
    }
  });

  it('reports a refused connection as HTTP status 0, retryable', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const provider = httpProvider({
      kind: 'openai-compatible',
      baseUrl: `http://127.0.0.1:${port}/v1`,
      model: 'm',
      apiKey: SECRET,
    });
    const error = await failure(provider.generate({ messages, signal: new AbortController().signal }));
    expect(error).toMatchObject({ code: 'PROVIDER_HTTP_ERROR', retryable: true, details: { status: 0 } });
    assertNoSecret(error);
  });

  it('refuses a bad configuration with PROVIDER_CONFIG_INVALID naming the option, without echoing the key', async () => {
    for (const bad of [
      { kind: 'openai', baseUrl: 'http://x', model: 'm' },
      { kind: 'anthropic', baseUrl: 'not a url', model: 'm', apiKey: SECRET },
      { kind: 'gemini', baseUrl: 'http://x', model: '' },
      { kind: 'gemini', baseUrl: 'http://x', model: 'm', colour: 'red' },
    ]) {
      let error: unknown;
      try {
        httpProvider(bad as never);
      } catch (e) {
        error = e;
      }
      expect(isDocketError(error, 'PROVIDER_CONFIG_INVALID')).toBe(true);
      expect((error as { details: { path: string } }).details.path).not.toBe('');
      assertNoSecret(error);
    }
  });

  it('sends the key only in the header each API expects', async () => {
    for (const kind of ['openai-compatible', 'anthropic', 'gemini'] as const) {
      await providerFor(kind).generate({ messages, signal: new AbortController().signal });
      const sent = local.requests.at(-1)!;
      expect(JSON.stringify(sent.body)).not.toContain(SECRET);
      expect(sent.path).not.toContain(SECRET);
    }
  });
});
