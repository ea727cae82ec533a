import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('Biome follows .gitignore', () => {
  it('what the event example leaves in its git-ignored folder is not linted', () => {
    const dir = join(ROOT, '.examples-lifecycle-tasks');
    const probe = join(dir, 'lint-probe.js');
    mkdirSync(dir, { recursive: true });
    writeFileSync(probe, 'var  unformatted = "lint me"  ;\n');
    try {
      const biome = spawnSync('pnpm', ['exec', 'biome', 'check', '.examples-lifecycle-tasks/lint-probe.js'], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      const output = `${biome.stdout}${biome.stderr}`;
      expect(output).toContain('Checked 0 files');
      expect(output).toContain('provided but ignored');
    } finally {
      rmSync(probe, { force: true });
    }
  });
});
