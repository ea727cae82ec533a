import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { isDocketError } from '@docket/core';
import { afterEach, describe, expect, it } from 'vitest';
import { loadProviders, parseDotenv } from '../src/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'docket-providers-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const YAML = `
default: openai
providers:
  openai:
    kind: openai-compatible
    baseUrl: https://file.example/v1
    model: file-model
    apiKeyEnv: OPENAI_API_KEY
    timeoutMs: 20000
  claude:
    kind: anthropic
    baseUrl: https://api.anthropic.com/v1
    model: claude-file
    apiKeyEnv: ANTHROPIC_API_KEY
`;

function configError(fn: () => unknown) {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect(isDocketError(error, 'PROVIDER_CONFIG_INVALID'), String(error)).toBe(true);
  return error as Error & { details: { path: string } };
}

describe('loadProviders', () => {
  it('defaults to local with no file and no variables', () => {
    const loaded = loadProviders({ cwd: project({}), env: {} });
    expect(loaded.default).toBe('local');
    expect(loaded.providers.local).toMatchObject({ name: 'local', baseUrl: null, provider: null });
  });

  it('reads docket.yaml, takes keys from apiKeyEnv, and never shows a key', () => {
    const loaded = loadProviders({
      cwd: project({ 'docket.yaml': YAML }),
      env: { OPENAI_API_KEY: 'sk-file-1', ANTHROPIC_API_KEY: 'sk-ant-2' },
    });
    expect(loaded.default).toBe('openai');
    expect(loaded.providers.openai).toMatchObject({
      kind: 'openai-compatible',
      baseUrl: 'https://file.example/v1',
      model: 'file-model',
      hasApiKey: true,
    });
    expect(loaded.providers.claude).toMatchObject({ kind: 'anthropic', model: 'claude-file', hasApiKey: true });
    const shown = `${inspect(loaded, { depth: 10 })}${JSON.stringify(loaded)}`;
    expect(shown).not.toContain('sk-file-1');
    expect(shown).not.toContain('sk-ant-2');
  });

  it('lets .env override the file and the environment override .env', () => {
    const cwd = project({
      'docket.yaml': YAML,
      '.env':
        'OPENAI_API_KEY=sk-dotenv\nDOCKET_PROVIDER_OPENAI_MODEL="dotenv-model"\nDOCKET_PROVIDER_OPENAI_BASE_URL=https://dotenv.example/v1\n',
    });
    const fromDotenv = loadProviders({ cwd, env: { ANTHROPIC_API_KEY: 'k' } });
    expect(fromDotenv.providers.openai).toMatchObject({
      model: 'dotenv-model',
      baseUrl: 'https://dotenv.example/v1',
      hasApiKey: true,
    });
    const fromEnv = loadProviders({ cwd, env: { ANTHROPIC_API_KEY: 'k', DOCKET_PROVIDER_OPENAI_MODEL: 'env-model' } });
    expect(fromEnv.providers.openai).toMatchObject({ model: 'env-model', baseUrl: 'https://dotenv.example/v1' });
  });

  it('builds a provider from environment variables alone, which becomes the default', () => {
    const loaded = loadProviders({
      cwd: project({}),
      env: {
        DOCKET_PROVIDER_GEMINI_KIND: 'gemini',
        DOCKET_PROVIDER_GEMINI_BASE_URL: 'https://generativelanguage.googleapis.com/v1beta',
        DOCKET_PROVIDER_GEMINI_MODEL: 'gemini-2.5-flash',
        DOCKET_PROVIDER_GEMINI_API_KEY: 'g-key',
      },
    });
    expect(loaded.default).toBe('gemini');
    expect(loaded.providers.gemini).toMatchObject({ kind: 'gemini', hasApiKey: true });
    expect(loaded.providers.gemini?.provider).not.toBeNull();
  });

  it('names the bad path for every configuration error, without echoing keys', () => {
    const cases: [Record<string, string>, Record<string, string>, string][] = [
      [{ 'docket.yaml': 'providers: [1, 2' }, {}, 'docket.yaml'],
      [
        { 'docket.yaml': 'providers:\n  x:\n    kind: openai\n    baseUrl: https://a/v1\n    model: m\n' },
        {},
        'providers.x.kind',
      ],
      [
        { 'docket.yaml': 'providers:\n  x:\n    kind: gemini\n    baseUrl: nope\n    model: m\n' },
        {},
        'providers.x.baseUrl',
      ],
      [
        {
          'docket.yaml': 'providers:\n  x:\n    kind: gemini\n    baseUrl: https://a\n    model: m\n    colour: red\n',
        },
        {},
        'providers.x.colour',
      ],
      [{ 'docket.yaml': 'default: missing\n' }, {}, 'default'],
      [{ 'docket.yaml': YAML }, { ANTHROPIC_API_KEY: 'sk-ant-secret' }, 'providers.openai.apiKeyEnv'],
      [
        {},
        { DOCKET_PROVIDER_BROKEN_KIND: 'openai-compatible', DOCKET_PROVIDER_BROKEN_API_KEY: 'sk-broken-secret' },
        'providers.broken.baseUrl',
      ],
      [
        {},
        {
          DOCKET_PROVIDER_ODD_KIND: 'llama',
          DOCKET_PROVIDER_ODD_BASE_URL: 'https://a',
          DOCKET_PROVIDER_ODD_MODEL: 'm',
        },
        'providers.odd.kind',
      ],
    ];
    for (const [files, env, path] of cases) {
      const error = configError(() => loadProviders({ cwd: project(files), env }));
      expect(error.details.path).toBe(path);
      expect(`${error.message}${JSON.stringify(error.details)}`).not.toMatch(/sk-ant-secret|sk-broken-secret/);
    }
  });
});

describe('parseDotenv', () => {
  it('reads comments, export, quotes and inline comments', () => {
    expect(parseDotenv('# c\nexport A=1\nB="two words"\nC=\'x#y\'\nD=3 # note\nbad line\n')).toEqual({
      A: '1',
      B: 'two words',
      C: 'x#y',
      D: '3',
    });
  });
});
