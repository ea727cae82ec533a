import { defineConfig } from 'tsup';
import { packageBuild } from '../../tooling/config/tsup.preset.ts';

export default defineConfig({
  ...packageBuild({
    index: 'src/index.ts',
    'store/index': 'src/store/index.ts',
    'testing/index': 'src/testing/index.ts',
    'conformance/index': 'src/testing/conformance.ts',
  }),
  external: ['vitest', 'fast-check'],
});
