/** `@docket/provider-http/testing`: the offline `local` model server on loopback, for development, examples and tests. */
export {
  LOCAL_FAILURE_HEADER,
  type LocalFailure,
  type LocalModel,
  type LocalModelOptions,
  type LocalRequest,
  localAnswer,
  startLocalModel,
} from './local-model.js';
