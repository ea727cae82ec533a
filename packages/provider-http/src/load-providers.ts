import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import * as util from 'node:util';
import * as v from 'valibot';
import { parse as parseYaml } from 'yaml';
import type { ProviderKind } from './apis.js';
import { providerError } from './errors.js';
import { type HttpProvider, httpProvider } from './http-provider.js';
import { strictObject } from './strict-object.js';

/** Where `loadProviders` reads from; every field has a default. */
export interface LoadProvidersOptions {
  /** The YAML file, relative to `cwd` unless absolute; default `docket.yaml`. A missing file is no error. */
  file?: string;
  /** Environment variables; default `process.env`. They override `.env`, which overrides the file. */
  env?: Record<string, string | undefined>;
  /** Where `docket.yaml` and `.env` are looked for; default `process.cwd()`. */
  cwd?: string;
}

/** One configured provider: what it is, and the provider itself (`null` for `local` when nothing configures it). */
export interface ConfiguredProvider {
  name: string;
  kind: ProviderKind;
  baseUrl: string | null;
  model: string;
  hasApiKey: boolean;
  /** Ready to use; `null` only for the built-in `local`, which the caller starts with `startLocalModel`. */
  provider: HttpProvider | null;
}

/** The named providers and the default one. */
export interface LoadedProviders {
  default: string;
  providers: Record<string, ConfiguredProvider>;
}

/** Provider names: lowercase, digits and underscores, so `DOCKET_PROVIDER_<NAME>_*` maps back to one name. */
const NAME = /^[a-z][a-z0-9_]*$/;
const fileSchema = strictObject({
  default: v.optional(v.pipe(v.string(), v.regex(NAME))),
  providers: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(NAME)),
      strictObject({
        kind: v.picklist(['openai-compatible', 'anthropic', 'gemini']),
        baseUrl: v.pipe(v.string(), v.url()),
        model: v.pipe(v.string(), v.minLength(1)),
        apiKeyEnv: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/))),
        timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(3_600_000))),
        maxTokensField: v.optional(v.pipe(v.string(), v.minLength(1))),
        headers: v.optional(v.record(v.string(), v.string())),
        options: v.optional(v.record(v.string(), v.unknown())),
      }),
    ),
  ),
});

type FileProvider = NonNullable<v.InferOutput<typeof fileSchema>['providers']>[string];

/**
 * Parses `.env` text with Node's own `util.parseEnv` (Node 20.12 and later): `KEY=value` lines, `#` comments,
 * `export`, quotes, and quoted values over several lines (PEM keys). Older Node 20 releases get the line parser below.
 */
export function parseDotenv(text: string): Record<string, string> {
  const native = (util as { parseEnv?: (content: string) => Record<string, string> }).parseEnv;
  return native ? { ...native(text) } : parseDotenvLines(text);
}

/** The line-by-line `.env` parser for Node releases without `util.parseEnv` (no multi-line values). */
function parseDotenvLines(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (!line || line.startsWith('#')) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    let value = match[2] ?? '';
    const quoted = /^(['"])([\s\S]*)\1$/.exec(value);
    if (quoted) value = quoted[1] === '"' ? (quoted[2] ?? '').replace(/\\n/g, '\n') : (quoted[2] ?? '');
    else value = value.replace(/\s+#.*$/, '');
    out[match[1] as string] = value;
  }
  return out;
}

function fail(message: string, path: string, secrets: string[] = []): never {
  throw providerError('PROVIDER_CONFIG_INVALID', message, secrets, { details: { path } });
}

/**
 * Reads the named providers from `docket.yaml`, `.env` and `DOCKET_PROVIDER_<NAME>_{KIND,BASE_URL,API_KEY,MODEL}`
 * (environment over `.env` over the file), validates them (`PROVIDER_CONFIG_INVALID` naming the bad path) and builds
 * each one. The default is the file's `default`, else the only provider, else `local`.
 */
export function loadProviders(options: LoadProvidersOptions = {}): LoadedProviders {
  const cwd = options.cwd ?? process.cwd();
  const fileConfig = readConfigFile(cwd, options.file ?? 'docket.yaml');
  const dotenvPath = join(cwd, '.env');
  const dotenv = existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath, 'utf8')) : {};
  const env: Record<string, string | undefined> = { ...dotenv, ...(options.env ?? process.env) };
  const secrets = Object.entries(env)
    .filter(([key, value]) => value && /API_KEY|TOKEN|SECRET/i.test(key))
    .map(([, value]) => value as string);
  const providers: Record<string, ConfiguredProvider> = {};
  for (const [name, entry] of mergedEntries(fileConfig, env))
    providers[name] = buildProvider(name, entry, env, secrets);
  if (!providers.local) {
    providers.local = {
      name: 'local',
      kind: 'openai-compatible',
      baseUrl: null,
      model: 'local',
      hasApiKey: false,
      provider: null,
    };
  }
  const configured = Object.keys(providers).filter((name) => name !== 'local' || providers.local?.provider !== null);
  const defaultName = fileConfig.default ?? (configured.length === 1 ? (configured[0] as string) : 'local');
  if (!providers[defaultName]) fail(`default names ${defaultName}, which is not configured`, 'default', secrets);
  return { default: defaultName, providers };
}

/** One provider's settings as the file and the environment give them, before they are checked. */
type ProviderEntry = Partial<FileProvider> & { apiKey?: string };

/** The configuration file, checked (`PROVIDER_CONFIG_INVALID` naming the path); empty when there is none. */
function readConfigFile(cwd: string, fileName: string): v.InferOutput<typeof fileSchema> {
  const filePath = isAbsolute(fileName) ? fileName : join(cwd, fileName);
  if (!existsSync(filePath)) return {};
  let data: unknown;
  try {
    data = parseYaml(readFileSync(filePath, 'utf8'));
  } catch (error) {
    fail(`${fileName} is not valid YAML: ${(error as Error).message.split('\n')[0]}`, fileName);
  }
  const parsed = v.safeParse(fileSchema, data ?? {});
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  const path = issue?.path?.map((p) => String(p.key)).join('.') || '(root)';
  // The expectation only, never the value received: a key pasted into apiKeyEnv must not be printed back.
  fail(`${fileName}: ${path}: ${issue?.expected ? `expected ${issue.expected}` : 'invalid'}`, path);
}

/** The file's providers with the `DOCKET_PROVIDER_<NAME>_*` variables laid over them, by lower-case name. */
function mergedEntries(
  fileConfig: v.InferOutput<typeof fileSchema>,
  env: Record<string, string | undefined>,
): Map<string, ProviderEntry> {
  const merged = new Map<string, ProviderEntry>();
  for (const [name, provider] of Object.entries(fileConfig.providers ?? {})) merged.set(name, { ...provider });
  for (const [key, value] of Object.entries(env)) {
    const match = /^DOCKET_PROVIDER_([A-Z0-9_]+?)_(KIND|BASE_URL|API_KEY|MODEL)$/.exec(key);
    if (!match || value === undefined || value === '') continue;
    const name = (match[1] as string).toLowerCase();
    const entry = merged.get(name) ?? {};
    const field = match[2] as 'KIND' | 'BASE_URL' | 'API_KEY' | 'MODEL';
    if (field === 'KIND') entry.kind = value as ProviderKind;
    if (field === 'BASE_URL') entry.baseUrl = value;
    if (field === 'MODEL') entry.model = value;
    if (field === 'API_KEY') entry.apiKey = value;
    merged.set(name, entry);
  }
  return merged;
}

/** Checks one provider's entry and builds it (`PROVIDER_CONFIG_INVALID` naming `providers.<name>.<field>`). */
function buildProvider(
  name: string,
  entry: ProviderEntry,
  env: Record<string, string | undefined>,
  secrets: string[],
): ConfiguredProvider {
  const where = `providers.${name}`;
  if (entry.kind === undefined) fail(`${where}.kind is missing`, `${where}.kind`, secrets);
  if (!['openai-compatible', 'anthropic', 'gemini'].includes(entry.kind)) {
    fail(`${where}.kind must be openai-compatible, anthropic or gemini`, `${where}.kind`, secrets);
  }
  if (!entry.baseUrl) fail(`${where}.baseUrl is missing`, `${where}.baseUrl`, secrets);
  if (!entry.model) fail(`${where}.model is missing`, `${where}.model`, secrets);
  let apiKey = entry.apiKey;
  if (apiKey === undefined && entry.apiKeyEnv !== undefined) {
    apiKey = env[entry.apiKeyEnv];
    if (!apiKey) fail(`${where}.apiKeyEnv names ${entry.apiKeyEnv}, which is not set`, `${where}.apiKeyEnv`, secrets);
  }
  let provider: HttpProvider;
  try {
    provider = httpProvider({
      name,
      kind: entry.kind,
      baseUrl: entry.baseUrl,
      model: entry.model,
      ...(apiKey ? { apiKey } : {}),
      ...(entry.timeoutMs === undefined ? {} : { timeoutMs: entry.timeoutMs }),
      ...(entry.maxTokensField === undefined ? {} : { maxTokensField: entry.maxTokensField }),
      ...(entry.headers === undefined ? {} : { headers: entry.headers }),
      ...(entry.options === undefined ? {} : { options: entry.options }),
    });
  } catch (error) {
    fail(
      `${where}: ${(error as Error).message}`,
      `${where}.${(error as { details?: { path?: string } }).details?.path}`,
      secrets,
    );
  }
  const { kind, baseUrl, model } = entry;
  return { name, kind, baseUrl, model, hasApiKey: Boolean(apiKey), provider };
}
