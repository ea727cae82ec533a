import type { Options } from 'tsup';

/** The build every public Docket package uses: ESM + d.ts, Node 20, no bundled dependencies. */
export function packageBuild(entry: Record<string, string>): Options {
  return {
    entry,
    format: ['esm'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
    platform: 'node',
    splitting: true,
    treeshake: true,
  };
}
