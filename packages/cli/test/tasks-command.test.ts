import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQueue, type Queue } from '@docket/core';
import { sqliteStore } from '@docket/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docketIn } from './in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'docket-cli-tasks-'));
const db = join(dir, 'docket.sqlite');
let api: Queue;

/** Runs the CLI in this process on the test's file. */
const docket = (argv: string[]) => docketIn(dir, db, argv);

beforeAll(async () => {
  api = createQueue({ store: sqliteStore({ filename: db }), logger: false, runtime: { mode: 'producer' } });
  const flow = { concurrency: 3, rate: { max: 10, perMs: 1000 }, group: { concurrency: 1 } };
  const task = api.define({ name: 'notify', version: '1', flow });
  api.define({ name: 'plain', version: '1' });
  await api.ready();
  await task.start({ query: 1, group: 'tenant-a' });
  await task.start({ query: 2, group: 'tenant-b' });
});

afterAll(async () => {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('docket tasks', () => {
  it('lists every task with its flow limits, state and counts, as the operator API does', async () => {
    const listed = await docket(['--json', 'tasks', 'list']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out)).toEqual(await api.operator.tasks.list());
    const human = await docket(['tasks', 'list']);
    expect(human.out).toMatch(/notify\s+1\s+active\s+concurrency 3, rate 10\/1000ms, group concurrency 1\s+2\s+0\s+1/);
    expect(human.out).toMatch(/plain\s+1\s+active\s+-/);
  });

  it('pauses and resumes a task, once per command id, and needs a reason', async () => {
    expect((await docket(['tasks', 'pause', 'notify'])).code).toBe(2);
    const paused = await docket(['tasks', 'pause', 'notify', '--reason', 'provider outage']);
    expect(paused).toMatchObject({ code: 0, out: 'applied: task notify is paused at revision 2' });
    expect((await api.operator.tasks.list()).find((t) => t.name === 'notify')?.paused).toBe(true);
    const again = await docket(['tasks', 'pause', 'notify', '--reason', 'provider outage', '--expected-revision', '2']);
    expect(again.out).toBe('noop: task notify is paused at revision 2 (unchanged)');
    const stale = await docket(['tasks', 'resume', 'notify', '--reason', 'back', '--expected-revision', '1']);
    expect(stale).toMatchObject({ code: 1 });
    expect(stale.err).toContain('REVISION_CONFLICT');
    const resumed = await docket(['tasks', 'resume', 'notify', '--reason', 'back']);
    expect(resumed.out).toBe('applied: task notify is active at revision 3');
    expect(await docket(['tasks', 'pause', 'nothing', '--reason', 'x'])).toMatchObject({
      code: 1,
      out: 'no task nothing',
    });
  });

  it('lists the runs of one group', async () => {
    const listed = JSON.parse((await docket(['--json', 'runs', 'list', '--group', 'tenant-b'])).out);
    expect(listed.items.map((run: { group: string }) => run.group)).toEqual(['tenant-b']);
  });
});
