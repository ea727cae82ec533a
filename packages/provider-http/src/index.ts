export { APIS, type ApiAdapter, type ApiSettings, type ProviderKind } from './apis.js';
export { extractJson, type HttpProvider, type HttpProviderOptions, httpProvider } from './http-provider.js';
export {
  type ConfiguredProvider,
  type LoadedProviders,
  type LoadProvidersOptions,
  loadProviders,
  parseDotenv,
} from './load-providers.js';
