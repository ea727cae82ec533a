import { defineConfig } from 'tsup';
import { packageBuild } from '../../tooling/config/tsup.preset.ts';

export default defineConfig({
  ...packageBuild({ index: 'src/index.ts' }),
  external: ['@docket/core', '@opentelemetry/api'],
});
