import { defineConfig } from 'vitest/config';
import PlainCountReporter from './tooling/config/vitest-reporter.ts';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    reporters: ['default', new PlainCountReporter()],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
