import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));
/** Core's layers, lowest first: a file may import from its own layer and the ones below it (docs/architecture.md). */
const LAYERS = ['util', 'machine', 'store', 'runtime'] as const;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The layer a path under `src/` belongs to, or `null` for the entry points and the conformance suite. */
function layerOf(path: string): number | null {
  const top = relative(SRC, path).split('/')[0] ?? '';
  const index = (LAYERS as readonly string[]).indexOf(top);
  return index === -1 ? null : index;
}

describe("core's layers", () => {
  it('never import from a layer above their own', () => {
    const upward: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const own = layerOf(file);
      if (own === null) continue;
      for (const match of readFileSync(file, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
        const target = layerOf(resolve(file, '..', match[1] as string));
        if (target !== null && target > own) upward.push(`${relative(SRC, file)} -> ${match[1]}`);
      }
    }
    expect(upward).toEqual([]);
  });
});
