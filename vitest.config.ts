import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import PlainCountReporter from './tooling/config/vitest-reporter.ts';

const src = (path: string) => fileURLToPath(new URL(`./packages/${path}`, import.meta.url));

/**
 * The files that spawn worker processes or a browser and keep a core busy, or run trials whose figures depend on
 * having the machine: they run two at a time, after the others. The others mostly wait (on the database server, on
 * timers) and run six at a time, sharing one module graph per worker (`isolate: false`), so a file costs what its
 * tests cost rather than a fresh import of the packages.
 */
const ALONE = [
  'packages/*/test/{multi-process,flow-multi-process,feed-multi-process,family-multi-process}.test.ts',
  'packages/*/test/chaos.test.ts',
  'packages/store-postgres/test/server.test.ts',
  'packages/dashboard/test/browser.test.ts',
  'packages/dashboard/test/find.browser.test.ts',
  'packages/examples/test/lifecycle.scenarios.test.ts',
  'packages/examples/test/script-output.test.ts',
];

/**
 * Files that spawn processes or a browser but mostly wait on the wall clock (a schedule's slots, a run due in seconds,
 * a page that must not change for seconds): they run in their own module graphs beside the shared files and start
 * first (the project's name sorts first), so their waits overlap the shared files' work.
 */
const WAITING = [
  'packages/*/test/schedules-multi-process.test.ts',
  'packages/examples/test/terminal-wait.test.ts',
  'packages/dashboard/test/live.browser.test.ts',
];

/** Files at once in the first group (`shared` and `clock`): vitest wants one number for the projects of a group. */
const FIRST_GROUP_WORKERS = 6;

export default defineConfig({
  resolve: {
    // Tests run against the sources of sibling packages, so a stale dist/ never hides a change.
    alias: [
      { find: /^@docket\/core\/testing$/, replacement: src('core/src/testing/index.ts') },
      { find: /^@docket\/core\/conformance$/, replacement: src('core/src/testing/conformance.ts') },
      { find: /^@docket\/core\/store$/, replacement: src('core/src/store/index.ts') },
      { find: /^@docket\/core$/, replacement: src('core/src/index.ts') },
      { find: /^@docket\/store-sqlite$/, replacement: src('store-sqlite/src/index.ts') },
      { find: /^@docket\/provider-http\/testing$/, replacement: src('provider-http/src/testing/index.ts') },
      { find: /^@docket\/provider-http$/, replacement: src('provider-http/src/index.ts') },
      { find: /^@docket\/store-postgres$/, replacement: src('store-postgres/src/index.ts') },
      { find: /^@docket\/otel$/, replacement: src('otel/src/index.ts') },
      { find: /^@docket\/dashboard\/node$/, replacement: src('dashboard/src/node.ts') },
      { find: /^@docket\/dashboard$/, replacement: src('dashboard/src/index.ts') },
      { find: /^@docket\/examples\/lifecycle$/, replacement: src('examples/src/lifecycle/index.ts') },
    ],
  },
  test: {
    // Type tests (*.test-d.ts): the public API's types as users see them, checked by tsc within `pnpm test`.
    typecheck: {
      enabled: true,
      include: ['packages/*/test/**/*.test-d.ts'],
      tsconfig: './tsconfig.typetests.json',
    },
    globalSetup: ['./tooling/config/vitest-global-setup.ts'],
    reporters: ['default', new PlainCountReporter()],
    // The default logger of every queue the tests make (and of the processes they spawn) writes nothing: a test that
    // provokes a failure asserts on it, not on stderr. Tests of the logger pass their own.
    env: { DOCKET_LOG_LEVEL: 'silent' },
    // A test's vi.stubEnv ends with the test: files share a worker's process.
    unstubEnvs: true,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...ALONE, ...WAITING],
          maxWorkers: FIRST_GROUP_WORKERS,
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'clock',
          include: WAITING,
          typecheck: { enabled: false },
          maxWorkers: FIRST_GROUP_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          typecheck: { enabled: false },
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
