import { defineConfig } from 'tsup';
import { packageBuild } from '../../tooling/config/tsup.preset.ts';

export default defineConfig({
  ...packageBuild({ index: 'src/index.ts', node: 'src/node.ts' }),
  external: ['@docket/core', 'hono', '@hono/node-server'],
});
