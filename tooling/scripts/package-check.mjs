// `pnpm check:examples:package`: the package experiment. Packs every public package, installs the tarballs with npm
// in a new directory outside the repository, type-checks a strict consumer with no path aliases, imports each
// package in a fresh process (it must print nothing and exit at once), runs the tracking flow from the installed
// packages, then the whole task experiment: the 20 lifecycle scenarios and the offline model-failure tests. Exits non-zero on any failure; writes a JSON report beside the lifecycle report.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blocksOf, documents, needsServer, promisedLines } from './doc-blocks.mjs';
import { packAll, repo } from './pack.mjs';

const work = mkdtempSync(join(tmpdir(), 'docket-package-check-'));
const tarballs = join(work, 'tarballs');
const consumer = join(work, 'consumer');
mkdirSync(tarballs);
mkdirSync(join(consumer, 'src'), { recursive: true });
const report = { startedAt: new Date().toISOString(), directory: work, steps: [] };
const step = (name, fn) => {
  const started = Date.now();
  process.stderr.write(`package check: ${name}\n`);
  try {
    const detail = fn();
    report.steps.push({ name, ok: true, ms: Date.now() - started, ...(detail ? { detail } : {}) });
  } catch (error) {
    report.steps.push({ name, ok: false, ms: Date.now() - started, error: String(error.message ?? error) });
    finish(1);
  }
};
const run = (command, args, options = {}) =>
  execFileSync(command, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...options });

function finish(code) {
  report.finishedAt = new Date().toISOString();
  report.ok = code === 0;
  const dir = join(repo, '.examples-lifecycle-tasks');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '.examples-lifecycle-package-live-results.json'), `${JSON.stringify(report, null, 2)}\n`);
  if (code === 0 && process.env.DOCKET_KEEP_PACKAGE_CHECK !== '1') rmSync(work, { recursive: true, force: true });
  process.exit(code);
}

step('build', () => {
  run('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: repo });
});

let packed = {};
step('pack', () => {
  packed = packAll(tarballs);
  return packed;
});

step('npm install the tarballs', () => {
  const dependencies = Object.fromEntries(Object.entries(packed).map(([name, file]) => [name, `file:${file}`]));
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify(
      {
        name: 'docket-consumer',
        private: true,
        type: 'module',
        dependencies: {
          ...dependencies,
          'better-sqlite3': '12.11.1',
          'drizzle-orm': '0.45.4',
          '@opentelemetry/api': '1.9.1',
        },
        // No @types/better-sqlite3: @docket/store-sqlite brings what its declarations need.
        devDependencies: { typescript: '6.0.3', '@types/node': '20.19.43' },
      },
      null,
      2,
    ),
  );
  run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: consumer,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
});

step('type-check a strict consumer with no path aliases', () => {
  writeFileSync(
    join(consumer, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
      },
      include: ['src'],
    }),
  );
  writeFileSync(
    join(consumer, 'src', 'consumer.ts'),
    `import { createQueue, DocketError, type RunInfo } from '@docket/core';
import { memoryStore } from '@docket/core/testing';
import { runStoreConformance } from '@docket/core/conformance';
import { checkWrite, type Store as StoreContract } from '@docket/core/store';
import { sqliteStore, type SqliteTransaction } from '@docket/store-sqlite';
import { httpProvider, loadProviders } from '@docket/provider-http';
import { startLocalModel } from '@docket/provider-http/testing';
import { postgresStore, type PostgresTransaction } from '@docket/store-postgres';
import { main as docketCommand } from '@docket/cli';
import { otelTelemetry } from '@docket/otel';
import { createDashboard } from '@docket/dashboard';
import { serveDashboard } from '@docket/dashboard/node';
import { sql } from 'drizzle-orm';

export async function main(): Promise<RunInfo<{ n: number }, { done: number }> | null> {
  const local = await startLocalModel();
  const model = httpProvider({ kind: 'openai-compatible', baseUrl: local.baseUrl, model: 'local' });
  const queue = createQueue({ store: sqliteStore({ filename: ':memory:' }), telemetry: otelTelemetry() });
  const task = queue.define<{ n: number }, { done: number }>({ name: 't', version: '1' }, {
    async execute(ctx) {
      const answer = await ctx.callModel(model, { messages: [{ role: 'user', content: String(ctx.query.n) }] });
      return ctx.end({ effect: (tx: SqliteTransaction) => { tx.run(sql\`SELECT \${answer.text}\`); } });
    },
  });
  await queue.ready();
  const { runId } = await task.start({ query: { n: 1 } });
  const info = await task.get(runId);
  const waited: RunInfo | null = await task.wait(runId, { timeoutMs: 1 });
  void waited;
  await queue.close();
  await local.close();
  const loaded = loadProviders({ env: {} });
  if (loaded.default !== 'local') throw new DocketError('PROVIDER_CONFIG_INVALID', 'expected local');
  void memoryStore;
  void runStoreConformance;
  void checkWrite;
  const contract: StoreContract | null = null;
  void contract;
  const pgQueue = createQueue({ store: postgresStore({ connectionString: 'postgres://localhost/none', schema: 'docket' }) });
  pgQueue.define({ name: 'p', version: '1' }, { execute: (ctx) => ctx.end({ effect: async (tx: PostgresTransaction) => { await tx.execute(sql\`SELECT 1\`); } }) });
  void docketCommand;
  const dashboard = createDashboard({ queue: pgQueue, readOnly: true, basePath: '/docket' });
  const served = await serveDashboard(dashboard, { port: 0 });
  const overview: Response = await dashboard(new Request(served.url));
  void overview;
  await served.close();
  // The store chosen at run time, with no cast: effects see the union of the two transaction types.
  const either = createQueue({
    store: process.env.DOCKET_PG ? postgresStore({ connectionString: 'postgres://localhost/none' }) : sqliteStore({ filename: ':memory:' }),
  });
  either.define({ name: 'e', version: '1' }, { execute: (ctx) => ctx.end({ effect: (tx: SqliteTransaction | PostgresTransaction) => void tx }) });
  return info;
}
`,
  );
  // skipLibCheck is off so Docket's own .d.ts files are checked too; drizzle-orm ships declarations for drivers that
  // are not installed (gel, mysql2, ...), so only errors in the consumer or in @docket/* count.
  const tsc = spawnSync(join(consumer, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], {
    cwd: consumer,
    encoding: 'utf8',
  });
  const lines = `${tsc.stdout}${tsc.stderr}`.split('\n').filter((line) => /^\S+\(\d+,\d+\): error/.test(line));
  const ours = lines.filter((line) => line.startsWith('src/') || line.startsWith('node_modules/@docket/'));
  if (ours.length > 0) throw new Error(ours.join('\n'));
  return { errorsInDocketOrConsumer: 0, errorsInThirdPartyDeclarations: lines.length };
});

step('import each package in a fresh process: nothing printed, exits at once', () => {
  const results = {};
  // Every public entry point but @docket/core/conformance (the store authors' suite declares vitest tests, and vitest
  // is its peer: it is type-checked above). The consumer has no vitest: @docket/core/testing must not need it.
  for (const specifier of [
    ...Object.keys(packed),
    '@docket/core/store',
    '@docket/core/testing',
    '@docket/dashboard/node',
    '@docket/provider-http/testing',
  ]) {
    const started = Date.now();
    const child = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(specifier)});`],
      {
        cwd: consumer,
        encoding: 'utf8',
        timeout: 15_000,
      },
    );
    if (child.status !== 0 || child.stdout !== '' || child.stderr !== '') {
      throw new Error(
        `importing ${specifier}: exit ${child.status}, stdout ${JSON.stringify(child.stdout)}, stderr ${JSON.stringify(child.stderr)}`,
      );
    }
    results[specifier] = `${Date.now() - started} ms`;
  }
  return results;
});

step('run every whole program of the READMEs and docs from the installed packages, as written', () => {
  // What a user copies: the core quick start, the SQLite example, the getting-started guide and the rest, each in a
  // directory of its own in the consumer, transpiled by the consumer's TypeScript and run there.
  const ts = createRequire(join(consumer, 'package.json'))('typescript');
  const ran = {};
  for (const block of documents(repo).flatMap((file) => blocksOf(file, repo))) {
    if (block.fragment || needsServer(block)) continue;
    const dir = join(consumer, 'docs-blocks', block.where.replace(/[^A-Za-z0-9]+/g, '-'));
    mkdirSync(dir, { recursive: true });
    const js = ts.transpileModule(block.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: 99 } });
    writeFileSync(join(dir, 'main.mjs'), js.outputText);
    const child = spawnSync(process.execPath, ['main.mjs'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    if (child.status !== 0) throw new Error(`${block.where} exited ${child.status}: ${child.stderr}`);
    const printed = child.stdout.trim().split('\n');
    const missing = promisedLines(block).filter((line) => !printed.includes(line));
    if (missing.length > 0) throw new Error(`${block.where} did not print ${JSON.stringify(missing)}`);
    ran[block.where] = 'ok';
  }
  if (Object.keys(ran).length < 5) throw new Error(`only ${Object.keys(ran).length} programs found in the docs`);
  return ran;
});

step('run the tracking flow from the installed packages', () => {
  // The flows' compiled code, resolving @docket/* from the consumer's node_modules (the tarballs), not the workspace.
  cpSync(join(repo, 'packages', 'examples', 'dist'), join(consumer, 'examples'), { recursive: true });
  writeFileSync(join(consumer, 'examples', 'package.json'), JSON.stringify({ type: 'module' }));
  const child = spawnSync(process.execPath, [join(consumer, 'examples', 'lifecycle', 'cli.js'), 'tracking'], {
    cwd: consumer,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (child.status !== 0) throw new Error(`tracking flow exited ${child.status}: ${child.stderr}`);
  const output = JSON.parse(child.stdout);
  const { status, reason } = output.result.job;
  if (status !== 'success' || !output.result.notice || output.provider !== 'local') {
    throw new Error(`tracking flow ended ${status}/${reason}, notice ${Boolean(output.result.notice)}`);
  }
  return { status, reason, provider: output.provider };
});

step('serve the dashboard from the installed packages and read its overview', () => {
  const script = `
    import { createQueue } from '@docket/core';
    import { createDashboard } from '@docket/dashboard';
    import { serveDashboard } from '@docket/dashboard/node';
    import { sqliteStore } from '@docket/store-sqlite';
    const store = sqliteStore({ filename: ':memory:' });
    const queue = createQueue({ store, runtime: { mode: 'producer' } });
    const task = queue.define({ name: 'packed', version: '1' });
    await queue.ready();
    await task.start({ query: null });
    const dashboard = createDashboard({ queue });
    const served = await serveDashboard(dashboard, { port: 0 });
    const page = await (await fetch(served.url)).text();
    await served.close();
    await queue.close();
    const pending = page.match(/data-task="packed" data-status="pending"><a [^>]+>(\\d+)</)?.[1];
    process.stdout.write(JSON.stringify({ pending }));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: consumer,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (child.status !== 0) throw new Error(`the dashboard exited ${child.status}: ${child.stderr}`);
  const { pending } = JSON.parse(child.stdout);
  if (pending !== '1') throw new Error(`the overview showed ${pending} pending runs, not 1`);
  return { pending: Number(pending) };
});

step('run the 20 lifecycle scenarios and the offline model-failure tests from the installed packages', () => {
  // The scenario test file runs as it does in the repository, except that its flows are the examples' compiled code
  // and every @docket/* import resolves to the installed tarballs. vitest is the workspace's own (linked, not
  // installed: it is a test runner, not part of what is published).
  const examples = join(consumer, 'examples');
  mkdirSync(join(examples, 'test'), { recursive: true });
  cpSync(join(repo, 'packages', 'examples', 'dist'), join(examples, 'dist'), { recursive: true });
  const test = readFileSync(join(repo, 'packages', 'examples', 'test', 'lifecycle.scenarios.test.ts'), 'utf8');
  if (!test.includes("from '../src/lifecycle/index.js'")) throw new Error('the scenario test no longer imports ../src');
  writeFileSync(
    join(examples, 'test', 'lifecycle.scenarios.test.ts'),
    test.replace("from '../src/lifecycle/index.js'", "from '../dist/lifecycle/index.js'"),
  );
  writeFileSync(
    join(examples, 'vitest.config.mjs'),
    'export default { test: { include: ["test/**/*.test.ts"], testTimeout: 60000, hookTimeout: 60000 } };\n',
  );
  symlinkSync(realpathSync(join(repo, 'node_modules', 'vitest')), join(consumer, 'node_modules', 'vitest'), 'dir');
  const results = join(work, 'vitest-results.json');
  const scenarios = join(work, 'scenarios.json');
  const child = spawnSync(
    process.execPath,
    [
      join(consumer, 'node_modules', 'vitest', 'vitest.mjs'),
      'run',
      '--root',
      examples,
      '--reporter=json',
      `--outputFile=${results}`,
    ],
    { cwd: examples, encoding: 'utf8', timeout: 600_000, env: { ...process.env, DOCKET_LIFECYCLE_REPORT: scenarios } },
  );
  const outcome = JSON.parse(readFileSync(results, 'utf8'));
  const tests = outcome.testResults.flatMap((file) => file.assertionResults);
  const failed = tests.filter((t) => t.status !== 'passed').map((t) => `${t.title}: ${t.status}`);
  // A title names the scenarios it proves by number: "03 ...", or "14 ...; 15 ..." for two in one test.
  const numbered = new Set(
    tests
      .filter((t) => t.status === 'passed')
      .flatMap((t) => [...t.title.matchAll(/(?:^|; )(\d{2}) /g)].map((m) => m[1])),
  );
  const missing = Array.from({ length: 20 }, (_, i) => String(i + 1).padStart(2, '0')).filter((n) => !numbered.has(n));
  const offline = tests.filter((t) => t.ancestorTitles.includes('offline model failures') && t.status === 'passed');
  if (child.status !== 0 || failed.length > 0 || missing.length > 0 || offline.length < 3) {
    throw new Error(
      `scenarios from the tarballs: failed ${failed.join('; ')}; missing ${missing.join(', ')}; ${child.stderr}`,
    );
  }
  return {
    scenarios: `${20 - missing.length} of 20`,
    offlineModelFailures: offline.map((t) => t.title),
    tests: tests.map((t) => ({ title: t.title, status: t.status, ms: Math.round(t.duration ?? 0) })),
    runs: JSON.parse(readFileSync(scenarios, 'utf8')).scenarios,
  };
});

process.stdout.write('package check: all steps passed\n');
finish(0);
