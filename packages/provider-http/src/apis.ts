import type { FinishReason, ModelRequest, ModelResponse } from '@docket/core';

/** The kinds of HTTP API a provider can speak. */
export type ProviderKind = 'openai-compatible' | 'anthropic' | 'gemini';

/** What a provider's configuration gives an API adapter. */
export interface ApiSettings {
  model: string;
  maxTokensField: string | undefined;
  options: Record<string, unknown>;
}

/** One HTTP API: where to send a request, how to shape it, and how to read the answer (`null`: not its shape). */
export interface ApiAdapter {
  /** The endpoint a request goes to. */
  url(baseUrl: string, model: string): string;
  /** The headers that carry the key. */
  headers(apiKey: string | undefined): Record<string, string>;
  /** The JSON request body. */
  body(request: ModelRequest, settings: ApiSettings): Record<string, unknown>;
  /** Reads the answer, or `null` when it has not the expected shape. */
  parse(body: unknown): Omit<ModelResponse, 'raw'> | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** OpenAI chat completions, and the many servers that speak it (vLLM, llama.cpp, Ollama, LM Studio, ...). */
const openai: ApiAdapter = {
  url: (baseUrl) => `${trimSlash(baseUrl)}/chat/completions`,
  headers: (apiKey): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  body(request, settings) {
    const body: Record<string, unknown> = { ...settings.options, model: settings.model, messages: request.messages };
    if (request.maxTokens !== undefined) body[settings.maxTokensField ?? 'max_tokens'] = request.maxTokens;
    if (request.temperature !== undefined) body.temperature = request.temperature;
    if (request.responseFormat === 'json') body.response_format = { type: 'json_object' };
    return body;
  },
  parse(body) {
    if (!isObject(body) || !Array.isArray(body.choices) || !isObject(body.choices[0])) return null;
    const choice = body.choices[0];
    const message = choice.message;
    if (!isObject(message) || typeof message.content !== 'string') return null;
    const finish: Record<string, FinishReason> = {
      stop: 'stop',
      length: 'length',
      content_filter: 'content_filter',
      tool_calls: 'tool_calls',
      function_call: 'tool_calls',
    };
    const usage = isObject(body.usage)
      ? {
          inputTokens: numberOr(body.usage.prompt_tokens),
          outputTokens: numberOr(body.usage.completion_tokens),
          totalTokens: numberOr(body.usage.total_tokens),
        }
      : undefined;
    return {
      text: message.content,
      finishReason: finish[String(choice.finish_reason)] ?? 'other',
      ...(usage ? { usage } : {}),
      model: typeof body.model === 'string' ? body.model : '',
    };
  },
};

/** Anthropic messages: the system prompt goes apart, `max_tokens` is required. */
const anthropic: ApiAdapter = {
  url: (baseUrl) => `${trimSlash(baseUrl)}/messages`,
  headers: (apiKey) => ({ 'anthropic-version': '2023-06-01', ...(apiKey ? { 'x-api-key': apiKey } : {}) }),
  body(request, settings) {
    const system = request.messages.filter((m) => m.role === 'system').map((m) => m.content);
    const body: Record<string, unknown> = {
      ...settings.options,
      model: settings.model,
      max_tokens: request.maxTokens ?? 1024,
      messages: request.messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, content: m.content })),
    };
    if (system.length > 0) body.system = system.join('\n\n');
    if (request.temperature !== undefined) body.temperature = request.temperature;
    return body;
  },
  parse(body) {
    if (!isObject(body) || !Array.isArray(body.content)) return null;
    const texts = body.content.filter(
      (part) => isObject(part) && part.type === 'text' && typeof part.text === 'string',
    );
    if (texts.length === 0) return null;
    const finish: Record<string, FinishReason> = {
      end_turn: 'stop',
      stop_sequence: 'stop',
      max_tokens: 'length',
      tool_use: 'tool_calls',
      refusal: 'content_filter',
    };
    const usage = isObject(body.usage)
      ? { inputTokens: numberOr(body.usage.input_tokens), outputTokens: numberOr(body.usage.output_tokens) }
      : undefined;
    return {
      text: texts.map((part) => (part as { text: string }).text).join(''),
      finishReason: finish[String(body.stop_reason)] ?? 'other',
      ...(usage ? { usage } : {}),
      model: typeof body.model === 'string' ? body.model : '',
    };
  },
};

/** Google Gemini generateContent; the key goes in a header, never in the URL. */
const gemini: ApiAdapter = {
  url: (baseUrl, model) => `${trimSlash(baseUrl)}/models/${encodeURIComponent(model)}:generateContent`,
  headers: (apiKey): Record<string, string> => (apiKey ? { 'x-goog-api-key': apiKey } : {}),
  body(request, settings) {
    const system = request.messages.filter((m) => m.role === 'system').map((m) => ({ text: m.content }));
    const generationConfig: Record<string, unknown> = { ...(settings.options.generationConfig as object) };
    if (request.maxTokens !== undefined) generationConfig.maxOutputTokens = request.maxTokens;
    if (request.temperature !== undefined) generationConfig.temperature = request.temperature;
    if (request.responseFormat === 'json') generationConfig.responseMimeType = 'application/json';
    const body: Record<string, unknown> = {
      ...settings.options,
      contents: request.messages
        .filter((m) => m.role !== 'system')
        .map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] })),
      generationConfig,
    };
    if (system.length > 0) body.systemInstruction = { parts: system };
    return body;
  },
  parse(body) {
    if (!isObject(body) || !Array.isArray(body.candidates) || !isObject(body.candidates[0])) return null;
    const candidate = body.candidates[0];
    const content = candidate.content;
    if (!isObject(content) || !Array.isArray(content.parts)) return null;
    const texts = content.parts.filter((part) => isObject(part) && typeof part.text === 'string');
    if (texts.length === 0) return null;
    const finish: Record<string, FinishReason> = {
      STOP: 'stop',
      MAX_TOKENS: 'length',
      SAFETY: 'content_filter',
      RECITATION: 'content_filter',
      BLOCKLIST: 'content_filter',
      PROHIBITED_CONTENT: 'content_filter',
    };
    const meta = isObject(body.usageMetadata) ? body.usageMetadata : null;
    const usage = meta
      ? {
          inputTokens: numberOr(meta.promptTokenCount),
          outputTokens: numberOr(meta.candidatesTokenCount),
          totalTokens: numberOr(meta.totalTokenCount),
        }
      : undefined;
    return {
      text: texts.map((part) => (part as { text: string }).text).join(''),
      finishReason: finish[String(candidate.finishReason)] ?? 'other',
      ...(usage ? { usage } : {}),
      model: typeof body.modelVersion === 'string' ? body.modelVersion : '',
    };
  },
};

function numberOr(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** The adapter for each kind. */
export const APIS: Record<ProviderKind, ApiAdapter> = { 'openai-compatible': openai, anthropic, gemini };
