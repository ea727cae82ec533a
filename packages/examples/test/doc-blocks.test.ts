import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error Plain JavaScript, shared with the package experiment.
import { blocksOf, documents, needsServer, promisedLines } from '../../../tooling/scripts/doc-blocks.mjs';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// Under the examples package, whose node_modules hold every @docket package: the blocks import them by name.
const WORK = fileURLToPath(new URL('../.doc-blocks/', import.meta.url));
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');
interface Block {
  /** Where it is: the file, relative to the repository, and the line of its opening fence. */
  where: string;
  code: string;
  fragment: boolean;
}

const blocks: Block[] = documents(ROOT).flatMap((file: string) => blocksOf(file, ROOT));
const programs = blocks.filter((block) => !block.fragment);
const dirOf = (block: Block) => join(WORK, block.where.replace(/[^A-Za-z0-9]+/g, '-'));
const SERVER = process.env.DOCKET_TEST_DATABASE_URL;
// The blocks that need a server get a database of their own, made for this run and dropped after it: a block opens
// the default schema, which a database kept from an earlier run (or another version of Docket) would already hold.
const DATABASE = `docket_doc_blocks_${process.pid}`;

/** Runs `statement` on the server's own database (creating or dropping the blocks' database). */
async function onServer(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The URL of the blocks' database: the server's URL with its database name replaced. */
function blocksUrl(): string {
  const url = new URL(SERVER as string);
  url.pathname = `/${DATABASE}`;
  return url.toString();
}

describe('the TypeScript blocks of the READMEs and docs run as written', () => {
  beforeAll(async () => {
    if (SERVER !== undefined) {
      await onServer(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
      await onServer(`CREATE DATABASE ${DATABASE}`);
    }
    rmSync(WORK, { recursive: true, force: true });
    for (const block of programs) {
      mkdirSync(dirOf(block), { recursive: true });
      writeFileSync(join(dirOf(block), 'main.ts'), `${block.code}\n`);
    }
    writeFileSync(
      join(WORK, 'tsconfig.json'),
      JSON.stringify({
        extends: '../../../tooling/config/tsconfig.base.json',
        // Third-party declarations (drizzle-orm's) are not the docs' concern: the package experiment checks Docket's
        // own with skipLibCheck off.
        compilerOptions: { noEmit: true, declaration: false, skipLibCheck: true, rootDir: '.' },
        include: ['**/main.ts'],
      }),
    );
  });

  afterAll(async () => {
    if (SERVER !== undefined) await onServer(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  });

  it('finds the blocks, and every one is a program or says it is a fragment', () => {
    expect(programs.length).toBeGreaterThanOrEqual(6);
    // The first block of a package README is what a user copies first: it must be a whole program.
    const firsts = new Map<string, Block>();
    for (const block of blocks) {
      const file = block.where.split(':')[0] as string;
      if (file.startsWith('packages/') && !firsts.has(file)) firsts.set(file, block);
    }
    expect([...firsts.values()].filter((block) => block.fragment).map((block) => block.where)).toEqual([]);
  });

  it('every program type-checks, strict, against the packages as an application imports them', () => {
    const tsc = spawnSync(process.execPath, [TSC, '-p', join(WORK, 'tsconfig.json')], { encoding: 'utf8' });
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
    expect(tsc.status).toBe(0);
  }, 120_000);

  it.each(programs.map((block) => [block.where, block] as const))('%s runs and exits 0', (_where, block) => {
    const server = needsServer(block);
    if (server && SERVER === undefined) return; // Without the server, the block is type-checked only (above).
    const source = ts.transpileModule(block.code, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    writeFileSync(join(dirOf(block), 'main.mjs'), source);
    const run = spawnSync(process.execPath, ['main.mjs'], {
      cwd: dirOf(block),
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '', ...(server ? { DATABASE_URL: blocksUrl() } : {}) },
    });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    // A block that says what it prints (`console.log(...); // success 3`) prints that.
    const promised: string[] = promisedLines(block);
    const printed = run.stdout.trim().split('\n');
    for (const line of promised) expect(printed).toContain(line);
  });
});
