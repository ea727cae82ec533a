// The TypeScript blocks of the READMEs and docs/, as users copy them. Used by the doc-blocks test (which type-checks
// and runs each whole program) and by the package experiment (which runs them against the installed tarballs).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What marks a block that is not a whole program: `<!-- fragment: why -->` just before it. */
const FRAGMENT = /^<!-- fragment: .+ -->$/;

/** The markdown files users read under `root`: the root README, each package's README, and docs/. */
export function documents(root) {
  const packages = readdirSync(join(root, 'packages')).map((name) => join(root, 'packages', name, 'README.md'));
  const docs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, 'docs', name));
  return [join(root, 'README.md'), ...packages, ...docs].filter((file) => {
    try {
      readFileSync(file);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Every TypeScript block of `file`: `where` (the file relative to `root`, and the line of its opening fence), `code`,
 * and `fragment` (a fragment marker stands before it).
 */
export function blocksOf(file, root) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```ts' && lines[i] !== '```typescript') continue;
    const end = lines.indexOf('```', i + 1);
    const before = lines.slice(Math.max(0, i - 2), i).map((line) => line.trim());
    blocks.push({
      where: `${relative(root, file)}:${i + 1}`,
      code: lines.slice(i + 1, end).join('\n'),
      fragment: before.some((line) => FRAGMENT.test(line)),
    });
    i = end;
  }
  return blocks;
}

/** Whether a block needs a PostgreSQL server (it reads `process.env.DATABASE_URL`). */
export const needsServer = (block) => block.code.includes('process.env.DATABASE_URL');

/** The lines a block promises to print: `console.log(...); // <line>`. */
export const promisedLines = (block) =>
  [...block.code.matchAll(/console\.log\(.*\); \/\/ (.+)$/gm)].map((match) => match[1]);
