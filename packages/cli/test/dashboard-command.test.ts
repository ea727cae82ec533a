import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createQueue } from '@docket/core';
import { sqliteStore } from '@docket/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'docket-cli-dashboard-'));
const db = join(dir, 'docket.sqlite');
const TOKEN = 'cli-dashboard-token-0123456789';

/** A `docket dashboard` process: its URL once it printed it, its stderr, and a way to stop it with a signal. */
interface Served {
  url: string;
  child: ChildProcessWithoutNullStreams;
  err: () => string;
}

function serve(args: string[], env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, '--db', db, 'dashboard', '--port', '0', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (c) => {
    err += c;
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      out += c;
      const url = out.match(/on (http:\/\/\S+\/)/)?.[1];
      if (url) resolve({ url, child, err: () => err });
    });
    child.on('close', (code) => reject(new Error(`docket dashboard exited ${code}: ${err}`)));
  });
}

/** Runs `docket` to its end: exit code and output. */
function run(args: string[]): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '' } });
  let err = '';
  child.stderr.on('data', (c) => {
    err += c;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, err })));
}

function stop(served: Served): Promise<number | null> {
  const closed = new Promise<number | null>((resolve) => served.child.on('close', resolve));
  served.child.kill('SIGTERM');
  return closed;
}

beforeAll(async () => {
  const queue = createQueue({ store: sqliteStore({ filename: db }), logger: false, runtime: { mode: 'producer' } });
  const task = queue.define<{ n: number }, null>({ name: 'shown', version: '1' });
  await queue.ready();
  await task.startMany([{ query: { n: 1 } }, { query: { n: 2 } }]);
  await queue.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docket dashboard', () => {
  it('serves the store with its token until SIGTERM, then exits 0 and stops listening', async () => {
    const served = await serve([], { DOCKET_DASHBOARD_TOKEN: TOKEN });
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect((await fetch(served.url)).status).toBe(401);
    const page = await fetch(served.url, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/data-task="shown" data-status="pending"><a [^>]+>2</);
    expect(await stop(served)).toBe(0);
    await expect(fetch(served.url)).rejects.toThrow();
  });

  it('offers no form with --read-only and refuses a POST', async () => {
    const served = await serve(['--read-only']);
    const runs = await (await fetch(`${served.url}runs`)).text();
    const runId = runs.match(/data-run-id="([0-9a-f]{32})"/)?.[1];
    const page = await (await fetch(`${served.url}runs/${runId}`)).text();
    expect(page).toContain('id="read-only"');
    expect(page).not.toContain('<form method="post"');
    const post = await fetch(`${served.url}runs/${runId}/cancel`, { method: 'POST', body: new URLSearchParams() });
    expect(post.status).toBe(403);
    expect(await stop(served)).toBe(0);
  });

  it('refuses bad flags: exit 2 for usage, 1 with CONFIG_INVALID for a bad token', async () => {
    for (const args of [['--port', '70000'], ['--port', 'x'], ['extra'], ['--status', 'failed'], ['--host', '']]) {
      expect((await run(['--db', db, 'dashboard', ...args])).code, args.join(' ')).toBe(2);
    }
    const short = await run(['--db', db, 'dashboard', '--port', '0', '--token', 'short']);
    expect(short.code).toBe(1);
    expect(short.err).toContain('CONFIG_INVALID');
  });

  it('answers only its own hosts, and exits with a coded error for a port in use or a host it does not have', async () => {
    const served = await serve([]);
    const port = new URL(served.url).port;
    // fetch will not send another Host: a raw request does, as a rebound browser would.
    const forged = await new Promise<number | undefined>((resolve, reject) =>
      request(served.url, { headers: { host: `evil.example:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
        .on('error', reject)
        .end(),
    );
    expect(forged).toBe(421);
    expect((await fetch(served.url.replace('127.0.0.1', 'localhost'))).status).toBe(200);
    const taken = await run(['--db', db, 'dashboard', '--port', port]);
    expect(taken.code).toBe(1);
    expect(taken.err).toContain('CONNECTION_UNAVAILABLE');
    expect(await stop(served)).toBe(0);
    const nowhere = await run(['--db', db, 'dashboard', '--port', '0', '--host', '203.0.113.7']);
    expect(nowhere.code).toBe(1);
    expect(nowhere.err).toContain('CONFIG_INVALID');
  });
});
