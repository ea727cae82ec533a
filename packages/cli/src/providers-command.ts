import { DocketError } from '@docket/core';
import { httpProvider, loadProviders } from '@docket/provider-http';
import { startLocalModel } from '@docket/provider-http/testing';
import type { Io } from './main.js';

/**
 * `docket providers check [name]`: one short generation through the named provider (the configured default without a
 * name; the offline local model for `local` when nothing configures it), reporting its model, latency and finish reason.
 */
export async function providersCheck(name: string | undefined, io: Io, json: boolean): Promise<number> {
  const loaded = loadProviders({ cwd: io.cwd, env: io.env });
  const chosen = name ?? loaded.default;
  const configured = loaded.providers[chosen];
  if (!configured) {
    throw new DocketError('PROVIDER_CONFIG_INVALID', `provider ${chosen} is not configured`, {
      details: { path: `providers.${chosen}` },
    });
  }
  const local = configured.provider ? null : await startLocalModel();
  try {
    const provider =
      configured.provider ??
      httpProvider({ kind: 'openai-compatible', baseUrl: local!.baseUrl, model: 'local', name: 'local' });
    const started = Date.now();
    const answer = await provider.generate({
      messages: [{ role: 'user', content: 'Reply with the single word OK.' }],
      maxTokens: 16,
      signal: AbortSignal.timeout(60_000),
    });
    const report = {
      provider: chosen,
      kind: configured.kind,
      model: answer.model || configured.model,
      latencyMs: Date.now() - started,
      finishReason: answer.finishReason,
    };
    io.out(
      json
        ? JSON.stringify(report, null, 2)
        : `${report.provider} (${report.kind}): model ${report.model}, ${report.latencyMs} ms, finish ${report.finishReason}`,
    );
    return 0;
  } finally {
    await local?.close();
  }
}
