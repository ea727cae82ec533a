import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The ways the local model can be told to fail. */
export type LocalFailure =
  | 'http500'
  | 'http429'
  | 'http401'
  | 'not-json'
  | 'bad-content'
  | 'bad-shape'
  | 'truncated'
  | 'slow'
  | 'reset';

/** Options of `startLocalModel`. */
export interface LocalModelOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** How long a `slow` answer waits; default 5000 ms. */
  slowMs?: number;
}

/** One request the local model received. */
export interface LocalRequest {
  api: 'openai-compatible' | 'anthropic' | 'gemini';
  path: string;
  body: unknown;
  /** When it arrived (epoch ms). */
  at: number;
}

/** A running local model. */
export interface LocalModel {
  /** The openai-compatible base URL (`http://127.0.0.1:<port>/v1`). */
  readonly baseUrl: string;
  /** The base URL for the anthropic kind (same server). */
  readonly anthropicBaseUrl: string;
  /** The base URL for the gemini kind (same server). */
  readonly geminiBaseUrl: string;
  readonly port: number;
  /** How many model requests it received (any API, failed ones included). */
  readonly requestCount: number;
  /** The model requests it received, in order. */
  readonly requests: readonly LocalRequest[];
  /** How many connections closed before their answer was sent (a client aborted). */
  readonly abortedConnections: number;
  /** Makes the next `times` requests (default: every request until `fail(null)`) fail in `mode`. */
  fail(mode: LocalFailure | null, times?: number): void;
  /** Stops the server and closes every connection. */
  close(): Promise<void>;
}

/** The header a single request can carry to fail in one of the `LocalFailure` modes. */
export const LOCAL_FAILURE_HEADER = 'x-local-model-fail';

interface Release {
  id: string;
  title: string;
  revision: number;
  change: string;
}

/** Finds a release (`{ id, title, revision, change }`) carried as JSON in the prompt, if any. */
function findRelease(text: string): Release | null {
  for (let start = text.indexOf('{'); start !== -1; start = text.indexOf('{', start + 1)) {
    for (let end = text.lastIndexOf('}'); end > start; end = text.lastIndexOf('}', end - 1)) {
      try {
        const value = JSON.parse(text.slice(start, end + 1)) as Record<string, unknown>;
        const release = (value.release ?? value) as Record<string, unknown>;
        if (
          typeof release.id === 'string' &&
          typeof release.title === 'string' &&
          typeof release.revision === 'number' &&
          typeof release.change === 'string'
        ) {
          return { id: release.id, title: release.title, revision: release.revision, change: release.change };
        }
      } catch {
        // not this span; keep looking
      }
    }
  }
  return null;
}

/** The deterministic answer: notice JSON for a release prompt, otherwise a short reply derived from the prompt. */
export function localAnswer(prompt: string): string {
  const release = findRelease(prompt);
  if (release) {
    return JSON.stringify({
      releaseId: release.id,
      revision: release.revision,
      title: release.title,
      body: `${release.title} (revision ${release.revision}) is ready. ${release.change}`,
    });
  }
  const digest = createHash('sha256').update(prompt).digest('hex').slice(0, 8);
  return `local model reply ${digest}`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      data += chunk;
    });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

function promptOf(api: LocalRequest['api'], body: Record<string, unknown>): string {
  if (api === 'gemini') {
    const contents = (body.contents as { parts?: { text?: string }[] }[] | undefined) ?? [];
    const system = (body.systemInstruction as { parts?: { text?: string }[] } | undefined)?.parts ?? [];
    return [...system, ...contents.flatMap((c) => c.parts ?? [])].map((p) => p.text ?? '').join('\n');
  }
  const messages = (body.messages as { content?: unknown }[] | undefined) ?? [];
  const system = typeof body.system === 'string' ? [body.system] : [];
  return [...system, ...messages.map((m) => (typeof m.content === 'string' ? m.content : ''))].join('\n');
}

function shapeAnswer(api: LocalRequest['api'], text: string, truncated: boolean, model: string): unknown {
  const usage = { input: 12, output: Math.max(1, Math.ceil(text.length / 4)) };
  if (api === 'anthropic') {
    return {
      id: 'msg_local',
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text }],
      stop_reason: truncated ? 'max_tokens' : 'end_turn',
      usage: { input_tokens: usage.input, output_tokens: usage.output },
    };
  }
  if (api === 'gemini') {
    return {
      candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: truncated ? 'MAX_TOKENS' : 'STOP' }],
      usageMetadata: {
        promptTokenCount: usage.input,
        candidatesTokenCount: usage.output,
        totalTokenCount: usage.input + usage.output,
      },
      modelVersion: model,
    };
  }
  return {
    id: 'chatcmpl-local',
    object: 'chat.completion',
    model,
    choices: [
      { index: 0, message: { role: 'assistant', content: text }, finish_reason: truncated ? 'length' : 'stop' },
    ],
    usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
  };
}

/** Answers `body` as JSON with `status` (and extra headers). */
function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** The API a request path belongs to, or `null` for a path no API serves. */
function apiOfPath(path: string): LocalRequest['api'] | null {
  if (!path.startsWith('/v1/') && !path.startsWith('/v1beta/')) return null;
  if (path.endsWith('/chat/completions')) return 'openai-compatible';
  if (path.endsWith('/messages')) return 'anthropic';
  if (path.endsWith(':generateContent')) return 'gemini';
  return null;
}

/**
 * Answers one request in a failure mode, as a remote model would fail; `true` when it answered (or dropped the
 * connection), `false` when the normal answer is still to be sent.
 */
async function answerFailure(
  mode: LocalFailure | null,
  req: IncomingMessage,
  res: ServerResponse,
  answer: (text: string, truncated: boolean) => unknown,
  prompt: string,
  slowMs: number,
): Promise<boolean> {
  switch (mode) {
    case 'http500':
      sendJson(res, 500, { error: { message: 'local model: internal error' } });
      return true;
    case 'http401':
      sendJson(res, 401, { error: { message: 'local model: invalid API key' } });
      return true;
    case 'http429':
      sendJson(res, 429, { error: { message: 'local model: slow down' } }, { 'retry-after': '2' });
      return true;
    case 'not-json':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('<html>this is not json</html>');
      return true;
    case 'bad-shape':
      sendJson(res, 200, { unexpected: true });
      return true;
    case 'bad-content':
      sendJson(res, 200, answer('Sure! Here is your notice: it is ready.', false));
      return true;
    case 'truncated':
      sendJson(res, 200, answer(localAnswer(prompt).slice(0, 20), true));
      return true;
    case 'reset':
      req.socket.destroy();
      return true;
    case 'slow':
      await new Promise((resolve) => setTimeout(resolve, slowMs));
      return res.destroyed;
    default:
      return false;
  }
}

/**
 * Starts an offline, deterministic model server on 127.0.0.1 that speaks the openai-compatible chat completions API
 * (and the anthropic and gemini shapes). Asked for a release notice (the prompt carries the release as JSON) it
 * answers valid notice JSON built from it; it can be told to fail in every way a remote model fails.
 */
export async function startLocalModel(options: LocalModelOptions = {}): Promise<LocalModel> {
  const requests: LocalRequest[] = [];
  let aborted = 0;
  let failure: LocalFailure | null = null;
  let failuresLeft = Number.POSITIVE_INFINITY;
  const slowMs = options.slowMs ?? 5000;

  /** The failure mode of this request: its header's, else the one set with `fail` while it lasts. */
  const modeOf = (req: IncomingMessage): LocalFailure | null => {
    const header = req.headers[LOCAL_FAILURE_HEADER];
    if (typeof header === 'string') return header as LocalFailure;
    if (failure === null || failuresLeft <= 0) return null;
    const mode = failure;
    failuresLeft--;
    if (failuresLeft === 0) failure = null;
    return mode;
  };

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    res.on('close', () => {
      if (!res.writableFinished) aborted++;
    });
    if (req.method === 'GET' && path.endsWith('/models')) {
      sendJson(res, 200, { object: 'list', data: [{ id: 'local', object: 'model' }] });
      return;
    }
    const api = apiOfPath(path);
    if (req.method !== 'POST' || api === null) {
      sendJson(res, 404, { error: { message: `no route ${req.method} ${path}` } });
      return;
    }
    const raw = await readBody(req).catch(() => '');
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      sendJson(res, 400, { error: { message: 'request body is not JSON' } });
      return;
    }
    requests.push({ api, path, body, at: Date.now() });
    const mode = modeOf(req);
    const inPath = /\/models\/([^/:]+):generateContent$/.exec(path)?.[1];
    const model = typeof body.model === 'string' ? body.model : inPath ? decodeURIComponent(inPath) : 'local';
    const prompt = promptOf(api, body);
    const answer = (text: string, truncated: boolean) => shapeAnswer(api, text, truncated, model);
    if (await answerFailure(mode, req, res, answer, prompt, slowMs)) return;
    sendJson(res, 200, answer(localAnswer(prompt), false));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const root = `http://127.0.0.1:${port}`;
  return {
    baseUrl: `${root}/v1`,
    anthropicBaseUrl: `${root}/v1`,
    geminiBaseUrl: `${root}/v1beta`,
    port,
    get requestCount() {
      return requests.length;
    },
    requests,
    get abortedConnections() {
      return aborted;
    },
    fail(mode, times) {
      failure = mode;
      failuresLeft = times ?? Number.POSITIVE_INFINITY;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
