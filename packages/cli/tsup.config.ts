import { defineConfig } from 'tsup';
import { packageBuild } from '../../tooling/config/tsup.preset.ts';

export default defineConfig({
  ...packageBuild({ index: 'src/index.ts', bin: 'src/bin.ts' }),
  external: [
    '@docket/core',
    '@docket/dashboard',
    '@docket/store-sqlite',
    '@docket/store-postgres',
    'pg',
    '@docket/provider-http',
    'better-sqlite3',
    'drizzle-orm',
  ],
});
