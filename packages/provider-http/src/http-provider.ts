import { inspect } from 'node:util';
import type { ModelProvider, ModelRequest, ModelResponse } from '@docket/core';
import * as v from 'valibot';
import { APIS, type ProviderKind } from './apis.js';
import { providerError } from './errors.js';
import { strictObject } from './strict-object.js';

/** The configuration of one HTTP model provider. */
export interface HttpProviderOptions {
  kind: ProviderKind;
  /** The API root, e.g. `https://api.openai.com/v1`, `https://api.anthropic.com/v1`, `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** The provider's own time limit per request; default 60000 ms. */
  timeoutMs?: number;
  /** openai-compatible only: the name of the max-tokens field (`max_tokens` or `max_completion_tokens`). */
  maxTokensField?: string;
  headers?: Record<string, string>;
  /** Extra fields merged into every request body (e.g. `{ top_p: 0.9 }`). */
  options?: Record<string, unknown>;
  /** A name for messages; defaults to the kind. */
  name?: string;
}

/** A `ModelProvider` over HTTP, with what it was configured with (never the key). */
export interface HttpProvider extends ModelProvider {
  readonly name: string;
  readonly kind: ProviderKind;
  readonly model: string;
  readonly baseUrl: string;
}

/** A lone surrogate: what no model name holds (a NUL is checked apart). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const optionsSchema = strictObject({
  kind: v.picklist(['openai-compatible', 'anthropic', 'gemini']),
  baseUrl: v.pipe(
    v.string(),
    v.url(),
    v.check((url) => /^https?:\/\//i.test(url), 'baseUrl must be an http:// or https:// URL'),
  ),
  model: v.pipe(
    v.string(),
    v.minLength(1),
    v.maxBytes(256),
    v.check(
      (model) => !LONE_SURROGATE.test(model) && !model.includes('\u0000'),
      'model is well-formed text without NUL',
    ),
  ),
  apiKey: v.optional(v.pipe(v.string(), v.minLength(1))),
  timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3_600_000))),
  maxTokensField: v.optional(v.pipe(v.string(), v.minLength(1))),
  headers: v.optional(
    v.pipe(
      v.custom<Record<string, string>>(
        (headers) => typeof headers === 'object' && headers !== null && !Array.isArray(headers),
        'headers is an object of names and values',
      ),
      v.record(
        v.pipe(v.string(), v.regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'a header name is a token (RFC 9110)')),
        v.pipe(v.string(), v.regex(/^[^\r\n\0]*$/, 'a header value holds no CR, LF or NUL')),
      ),
    ),
  ),
  options: v.optional(v.record(v.string(), v.unknown())),
  name: v.optional(v.pipe(v.string(), v.minLength(1))),
});

const RETRYABLE_STATUS = (status: number) => status === 408 || status === 429 || status >= 500;

/** Extracts the JSON a model answered, accepting a fenced ```json block around it; `null` when it does not parse. */
export function extractJson(text: string): string | null {
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(text);
  const candidate = (fenced ? fenced[1] : text)?.trim() ?? '';
  try {
    JSON.parse(candidate);
    return candidate;
  } catch {
    return null;
  }
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/**
 * Everything of a provider's options that may hold a credential, for `providerError` to redact: the API key, every
 * custom header's value (a key may be sent in one and echoed back by the server), and a `baseUrl`'s user and password.
 */
function secretsOf(options: unknown): string[] {
  const o = (options ?? {}) as { apiKey?: unknown; headers?: unknown; baseUrl?: unknown };
  const secrets: string[] = [];
  if (typeof o.apiKey === 'string' && o.apiKey !== '') secrets.push(o.apiKey);
  if (o.headers !== null && typeof o.headers === 'object') {
    for (const value of Object.values(o.headers))
      if (typeof value === 'string' && value.length >= 4) secrets.push(value);
  }
  if (typeof o.baseUrl === 'string') {
    try {
      const url = new URL(o.baseUrl);
      for (const part of [url.username, url.password]) {
        if (part !== '') secrets.push(part, decodeURIComponent(part));
      }
      // A key passed in the query string (`?key=...`, as some APIs take it).
      for (const value of url.searchParams.values()) if (value.length >= 4) secrets.push(value);
    } catch {
      // not a URL: the schema refuses it
    }
  }
  return secrets;
}

/** A URL without its user, password and query string (which may carry a key), for showing. */
function withoutCredentials(baseUrl: string): string {
  const url = new URL(baseUrl);
  if (url.username === '' && url.password === '' && url.search === '') return baseUrl;
  url.username = '';
  url.password = '';
  url.search = '';
  return url.toString();
}

/**
 * Creates a `ModelProvider` for an openai-compatible, anthropic or gemini HTTP API with the global `fetch`. The
 * caller's `signal` aborts the request at once (`PROVIDER_ABORTED`); `timeoutMs` is the provider's own limit
 * (`PROVIDER_TIMEOUT`). Every failure is a coded `DocketError`; the API key never appears in any of them.
 */
export function httpProvider(options: HttpProviderOptions): HttpProvider {
  const secrets = secretsOf(options);
  const config = parseOptions(options, secrets);
  const api = APIS[config.kind];
  const name = config.name ?? config.kind;
  const call: ProviderCall = { name, secrets, timeoutMs: config.timeoutMs ?? 60_000 };
  const settings = { model: config.model, maxTokensField: config.maxTokensField, options: config.options ?? {} };

  async function generate(request: ModelRequest & { signal: AbortSignal }): Promise<ModelResponse> {
    const { signal, ...rest } = request;
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...config.headers, ...api.headers(config.apiKey) },
      body: JSON.stringify(api.body(rest, settings)),
    };
    const { response, text } = await timedFetch(call, api.url(config.baseUrl, config.model), init, signal);
    const body = parseBody(call, response, text);
    const answer = api.parse(body);
    if (answer === null) {
      throw providerError(
        'PROVIDER_INVALID_RESPONSE',
        `${name}: the answer is not the ${config.kind} API's shape`,
        secrets,
        {
          details: { body: text.slice(0, 500) },
        },
      );
    }
    if (answer.finishReason !== 'stop') {
      throw providerError('PROVIDER_TRUNCATED', `${name}: the answer stopped for ${answer.finishReason}`, secrets, {
        details: { finishReason: answer.finishReason, text: answer.text.slice(0, 500) },
      });
    }
    const content = request.responseFormat === 'json' ? jsonContent(call, answer.text) : answer.text;
    return { ...answer, text: content, model: answer.model || config.model, raw: body };
  }

  const provider: HttpProvider = {
    name,
    kind: config.kind,
    model: config.model,
    baseUrl: withoutCredentials(config.baseUrl),
    generate,
  };
  // Shown in logs and by util.inspect: what the provider is, never its key.
  Object.defineProperty(provider, inspect.custom, {
    value: () => `HttpProvider { name: '${name}', kind: '${config.kind}', model: '${config.model}' }`,
  });
  return provider;
}

/** What every failure of one provider's requests is reported with. */
interface ProviderCall {
  name: string;
  secrets: readonly string[];
  timeoutMs: number;
}

/** Checks the options (`PROVIDER_CONFIG_INVALID` naming the path, never the value received). */
function parseOptions(options: HttpProviderOptions, secrets: string[]): v.InferOutput<typeof optionsSchema> {
  const parsed = v.safeParse(optionsSchema, options);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  const path = issue?.path?.map((p) => String(p.key)).join('.') || '(root)';
  // The expectation only, never the value received: a misplaced key must not be printed back.
  const expected = issue?.expected ? `expected ${issue.expected}` : 'invalid';
  throw providerError('PROVIDER_CONFIG_INVALID', `invalid provider option ${path}: ${expected}`, secrets, {
    details: { path },
  });
}

/**
 * Sends the request and reads the whole answer, within the provider's `timeoutMs` and until the caller's `signal`
 * aborts: `PROVIDER_ABORTED`, `PROVIDER_TIMEOUT`, or a retryable `PROVIDER_HTTP_ERROR` (status 0) when the connection
 * failed.
 */
async function timedFetch(
  call: ProviderCall,
  url: string,
  init: RequestInit,
  signal: AbortSignal | undefined,
): Promise<{ response: Response; text: string }> {
  const { name, secrets, timeoutMs } = call;
  if (signal?.aborted) {
    throw providerError('PROVIDER_ABORTED', `${name}: the request was aborted before it was sent`, secrets);
  }
  const controller = new AbortController();
  let why: 'caller' | 'timeout' | null = null;
  const onAbort = () => {
    why ??= 'caller';
    controller.abort();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    why ??= 'timeout';
    controller.abort();
  }, timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: controller.signal });
    return { response, text: await response.text() };
  } catch (error) {
    if (why === 'caller') throw providerError('PROVIDER_ABORTED', `${name}: the request was aborted`, secrets);
    if (why === 'timeout') {
      throw providerError('PROVIDER_TIMEOUT', `${name}: no answer within ${timeoutMs} ms`, secrets, {
        details: { timeoutMs },
      });
    }
    throw providerError('PROVIDER_HTTP_ERROR', `${name}: the connection failed (${describe(error)})`, secrets, {
      retryable: true,
      details: { status: 0 },
      cause: error,
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** The answer's JSON body: an HTTP error status is `PROVIDER_HTTP_ERROR` (with `Retry-After`), no JSON is invalid. */
function parseBody(call: ProviderCall, response: Response, text: string): unknown {
  const { name, secrets } = call;
  if (!response.ok) {
    const retryAfter = retryAfterMs(response.headers.get('retry-after'));
    throw providerError('PROVIDER_HTTP_ERROR', `${name}: HTTP ${response.status}`, secrets, {
      retryable: RETRYABLE_STATUS(response.status),
      details: {
        status: response.status,
        body: text.slice(0, 500),
        ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
      },
    });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw providerError('PROVIDER_INVALID_RESPONSE', `${name}: the answer is not JSON`, secrets, {
      details: { body: text.slice(0, 500) },
    });
  }
}

/** The JSON an answer asked for with `responseFormat: 'json'` holds, or `PROVIDER_INVALID_RESPONSE`. */
function jsonContent(call: ProviderCall, content: string): string {
  const json = extractJson(content);
  if (json !== null) return json;
  throw providerError(
    'PROVIDER_INVALID_RESPONSE',
    `${call.name}: the content is not the JSON asked for`,
    call.secrets,
    {
      details: { text: content.slice(0, 500) },
    },
  );
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
