import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));

/** The packages a built module and every module it imports (relative ones, followed) import by name. */
function importedPackages(entry: string): Set<string> {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
      if (specifier === undefined) continue;
      if (specifier.startsWith('.')) visit(join(dirname(file), specifier));
      else packages.add(specifier);
    }
  };
  visit(join(DIST, entry));
  return packages;
}

describe('@docket/core/testing needs no test runner', () => {
  it('neither the testing entry nor anything it imports imports vitest or fast-check', () => {
    const packages = [...importedPackages('testing/index.js')];
    expect(packages.filter((name) => name.startsWith('vitest') || name === 'fast-check')).toEqual([]);
    // The conformance entry is where vitest is: the check above would see it if it were reached.
    expect([...importedPackages('conformance/index.js')]).toContain('vitest');
  });

  it('a process that cannot resolve vitest imports it and uses the memory store', () => {
    // A loader hook refuses to resolve vitest, as in an application that never installed it.
    const hook = `data:text/javascript,${encodeURIComponent(
      `export async function resolve(specifier, context, next) {
         if (specifier === 'vitest' || specifier.startsWith('vitest/')) throw new Error('vitest is not installed');
         return next(specifier, context);
       }`,
    )}`;
    const script = `
      import { register } from 'node:module';
      register(${JSON.stringify(hook)});
      const { memoryStore, waitForStatus } = await import(${JSON.stringify(join(DIST, 'testing/index.js'))});
      const { createQueue } = await import(${JSON.stringify(join(DIST, 'index.js'))});
      const queue = createQueue({ store: memoryStore(), logger: false, protocol: { pollMs: 5 } });
      const task = queue.define({ name: 'hello', version: '1' }, { execute: (ctx) => ctx.end() });
      await queue.ready();
      const { runId } = await task.start({ query: {} });
      const info = await waitForStatus(task, runId, 'success');
      await queue.close();
      process.stdout.write(info.status);`;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect({ status: child.status, out: child.stdout, err: child.stderr }).toEqual({
      status: 0,
      out: 'success',
      err: '',
    });
  });
});
