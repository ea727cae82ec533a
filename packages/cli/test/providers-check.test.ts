import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalModel, startLocalModel } from '@docket/provider-http/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliAt } from './in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'docket-cli-providers-'));
let local: LocalModel;

/** Runs the CLI in this process, in this file's directory. */
const docket = cliAt(dir);

beforeAll(async () => {
  local = await startLocalModel();
});
afterAll(async () => {
  await local.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('docket providers check', () => {
  it('checks a provider configured in the environment against the local model, never printing the key', async () => {
    const env = {
      DOCKET_PROVIDER_LOCALHTTP_KIND: 'openai-compatible',
      DOCKET_PROVIDER_LOCALHTTP_BASE_URL: local.baseUrl,
      DOCKET_PROVIDER_LOCALHTTP_MODEL: 'local-check',
      DOCKET_PROVIDER_LOCALHTTP_API_KEY: 'sk-cli-secret-value',
    };
    const before = local.requestCount;
    const result = await docket(['providers', 'check', '--provider', 'localhttp', '--json'], env);
    expect(result.code, result.err).toBe(0);
    expect(JSON.parse(result.out)).toMatchObject({ provider: 'localhttp', model: 'local-check', finishReason: 'stop' });
    expect(local.requestCount).toBe(before + 1);
    expect(`${result.out}${result.err}`).not.toContain('sk-cli-secret-value');
  });

  it('reports a failing model with its code and exit 1', async () => {
    local.fail('http500', 1);
    const result = await docket(['providers', 'check'], {
      DOCKET_PROVIDER_LOCALHTTP_KIND: 'openai-compatible',
      DOCKET_PROVIDER_LOCALHTTP_BASE_URL: local.baseUrl,
      DOCKET_PROVIDER_LOCALHTTP_MODEL: 'local-check',
      DOCKET_PROVIDER_LOCALHTTP_API_KEY: 'sk-cli-secret-value',
    });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^PROVIDER_HTTP_ERROR: /);
    expect(result.err).not.toContain('sk-cli-secret-value');
  });

  it('starts the local model when nothing is configured', async () => {
    const result = await docket(['providers', 'check']);
    expect(result.code, result.err).toBe(0);
    expect(result.out).toMatch(/^local \(openai-compatible\): model local, \d+ ms, finish stop/);
  });
});
