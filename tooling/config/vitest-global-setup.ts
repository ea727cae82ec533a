import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Builds every package once before the tests: tests that spawn child processes import the built packages by their
 * public names, exactly as users do. turbo's cache makes this a no-op when nothing changed. Says when the tests that
 * need a real PostgreSQL server are left out, and how to run them.
 */
export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
  });
  if (!process.env.DOCKET_TEST_DATABASE_URL) {
    process.stderr.write(
      'PostgreSQL server tests are skipped (the suite of the PostgreSQL store runs on PGlite): set ' +
        'DOCKET_TEST_DATABASE_URL=postgres://user@host:5432/db to run them against a real server.\n',
    );
  }
}
