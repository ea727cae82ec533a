/** One chat message sent to a model. */
export interface ModelMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** What a handler asks a model for. `responseFormat: 'json'` asks the API for JSON output where it can. */
export interface ModelRequest {
  messages: ModelMessage[];
  responseFormat?: 'text' | 'json';
  maxTokens?: number;
  temperature?: number;
}

/** Why a model stopped, normalised across APIs. */
export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls' | 'other';

/** A model's answer. */
export interface ModelResponse {
  text: string;
  finishReason: FinishReason;
  usage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number };
  model: string;
  /** The API's body as received, for debugging. */
  raw: unknown;
}

/** A language model Docket can call through `ctx.callModel`; `@docket/provider-http` implements it over HTTP. */
export interface ModelProvider {
  /** Sends one request; rejects with a coded `DocketError` (`PROVIDER_*`). Aborting `signal` aborts the request. */
  generate(request: ModelRequest & { signal: AbortSignal }): Promise<ModelResponse>;
}
