import { defineConfig } from 'tsup';
import { packageBuild } from '../../tooling/config/tsup.preset.ts';

export default defineConfig({
  ...packageBuild({
    'lifecycle/index': 'src/lifecycle/index.ts',
    'lifecycle/cli': 'src/lifecycle/cli.ts',
    'batch/receipts': 'src/batch/receipts.ts',
    'batch/cli': 'src/batch/cli.ts',
    'fanout/digest': 'src/fanout/digest.ts',
    'fanout/cli': 'src/fanout/cli.ts',
  }),
  external: [
    '@docket/core',
    '@docket/store-sqlite',
    '@docket/store-postgres',
    'pg',
    '@docket/provider-http',
    'better-sqlite3',
    'drizzle-orm',
  ],
});
