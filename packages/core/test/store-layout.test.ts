import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** The SQL stores' verb folders. */
const STORES = ['store-sqlite', 'store-postgres'].map((name) =>
  fileURLToPath(new URL(`../../${name}/src/sql`, import.meta.url)),
);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : name.endsWith('.ts') ? [path] : [];
  });
}

/** The verb a path under `sql` belongs to: its folder, or its file's name. */
const verbOf = (sql: string, path: string) => (relative(sql, path).split(sep)[0] as string).replace(/\.ts$/, '');

describe("the SQL stores' verbs under src/sql", () => {
  it.each(STORES)('never import one another in %s (what they share lives outside src/sql)', (sql) => {
    const crossings: string[] = [];
    for (const file of files(sql)) {
      for (const match of readFileSync(file, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
        const target = resolve(file, '..', match[1] as string);
        if (relative(sql, target).startsWith('..')) continue;
        if (verbOf(sql, target) !== verbOf(sql, file)) crossings.push(`${relative(sql, file)} -> ${match[1]}`);
      }
    }
    expect(crossings).toEqual([]);
  });
});
