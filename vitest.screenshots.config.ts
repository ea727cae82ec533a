import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/** `pnpm screenshots`: the dashboard's pages rendered in Chromium into docs/dashboard/ (not part of `pnpm test`). */
export default defineConfig({
  resolve: base.resolve,
  test: { include: ['packages/dashboard/test/screenshots.shoot.ts'], testTimeout: 120_000 },
});
